import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import type { RunRecord } from '../store/index.js';
import { RunSpecError } from './errors.js';
import { runSpecOf } from './run-spec.js';

const fixtures = join(import.meta.dirname, '../../test/fixtures/run-spec');

/** A stored run as the store returns it, from a fixture of what an older Sage wrote. */
function recordFrom(file: string, id = 'run_fixture'): RunRecord {
  const { channel, userId, options } = JSON.parse(readFileSync(join(fixtures, file), 'utf8')) as { channel: string; userId: string; options: Record<string, unknown> };
  const now = new Date().toISOString();
  return { id, status: 'suspended', userId, sessionId: id, channel, task: 'the task', options, owner: null, epoch: 1, leaseExpiresAt: null, pendingInteractionId: null, finalText: null, error: null, createdAt: now, updatedAt: now, finishedAt: null };
}

describe('RunSpec versions', () => {
  test('a version 1 detached run (rules in metadata.cli) still loads, with every rule, the mode, the base URL and one-task', () => {
    expect(runSpecOf(recordFrom('v1-detached.json'))).toEqual({
      runId: 'run_fixture',
      task: 'the task',
      model: 'scripted:/abs/script.json',
      baseUrl: 'http://127.0.0.1:11434/v1',
      cwd: '/abs/project',
      additionalDirectories: [],
      surface: 'detached',
      startedBy: 'local',
      mode: 'non-interactive',
      permissionMode: 'acceptEdits',
      rules: [
        { behavior: 'deny', rule: 'Read(.env)', source: 'cli' },
        { behavior: 'ask', rule: 'Bash(git push *)', source: 'cli' },
        { behavior: 'allow', rule: 'Bash(npm test)', source: 'cli' },
      ],
      ignoreBrokenSettings: false,
      oneTask: true,
      maxSteps: 7,
      interactionTimeoutMs: 60000,
    });
  });

  test('a version 1 web run loads as a web run (its lists stay with the web gate, in metadata)', () => {
    const spec = runSpecOf(recordFrom('v1-web.json'));
    expect(spec).toMatchObject({ surface: 'web', startedBy: 'bob', rules: [], oneTask: false, mode: 'interactive' });
  });

  test('a stored spec that no longer validates is refused with the run id and the field', () => {
    const record = recordFrom('v1-detached.json', 'run_edited');
    record.options = { ...record.options, version: 2, permissions: { rules: [{ behavior: 'maybe', rule: 'Bash', source: 'cli' }] } };
    expect(() => runSpecOf(record)).toThrow(RunSpecError);
    expect(() => runSpecOf(record)).toThrow(/Run run_edited .*permissions\.rules\.0\.behavior/);
    const v1 = recordFrom('v1-detached.json', 'run_v1_edited');
    (v1.options['metadata'] as { cli: Record<string, unknown> }).cli['allow'] = 'Bash';
    expect(() => runSpecOf(v1)).toThrow(/Run run_v1_edited .*metadata\.cli\.allow/);
    expect(() => runSpecOf({ ...v1, options: { ...v1.options, version: 9 } })).toThrow(/Run run_v1_edited .*version/);
  });
});
