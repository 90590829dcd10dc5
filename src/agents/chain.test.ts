import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import type { RunEvent } from '../events/index.js';
import { createRunFactory, type RunRequest } from '../runtime/create-run.js';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { chainActions, shouldFinalize } from './chain.js';

/** The action chain around Sage's own loop: setup → the loop's work → cleanup. */
let dir: string;
let project: string;
let store: Store;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-chain-')));
  project = join(dir, 'project');
  mkdirSync(join(dir, 'home', '.sage'), { recursive: true });
  mkdirSync(project);
  store = await openSqliteStore(':memory:');
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function play(key: string, turns: unknown[], chain: RunRequest['chain']) {
  const script = join(dir, `${key}.json`);
  writeFileSync(script, JSON.stringify({ turns }));
  const events: RunEvent[] = [];
  const runId = `run_chain_${key}`;
  const factory = createRunFactory({ store, home: join(dir, 'home'), terminal: { runId, onEvent: (e) => events.push(e) } });
  const runner = new DurableRunner({ store, runtime: factory });
  await runner.open();
  try {
    const spec = await factory.admitRun({ task: 't', surface: 'terminal', model: `scripted:${script}`, cwd: project, oneTask: true, mode: 'non-interactive', autoResponse: 'allow', chain });
    const handle = await runner.start('t', { ...spec, runId });
    return { outcome: await handle.outcome, events };
  } finally {
    await runner.close();
  }
}

describe('the action chain around Sage\'s own loop', () => {
  test('setup runs before the first model turn, cleanup after the answer, each a chain.step event', async () => {
    const { outcome, events } = await play('ok', [{ toolCalls: [{ name: 'Read', input: { file_path: join(project, 'prepared.txt') } }] }, { text: 'read it' }], { setup: 'echo prepared > prepared.txt', cleanup: 'echo cleaning; rm prepared.txt' });
    expect(outcome.status).toBe('completed');
    expect(outcome.toolHistory[0]?.result.content).toContain('prepared');
    expect(existsSync(join(project, 'prepared.txt'))).toBe(false);
    const types = events.map((e) => e.type).filter((t) => t === 'chain.step' || t === 'message.completed');
    expect(types[0]).toBe('chain.step');
    expect(types.at(-1)).toBe('chain.step');
    expect(events.filter((e) => e.type === 'chain.step').map((e) => (e.data as { step: string; output: string }).step)).toEqual(['setup', 'cleanup']);
  });

  test('a failed setup stops the chain: no model turn, no cleanup, the run fails saying which script and why', async () => {
    const { outcome, events } = await play('fail', [{ text: 'never' }], { setup: 'echo cannot install >&2; exit 7', cleanup: 'touch cleaned.txt' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('setup_failed');
    expect(outcome.error?.message).toContain('exit code 7');
    expect(outcome.error?.message).toContain('cannot install');
    expect(events.some((e) => e.type === 'message.completed')).toBe(false);
    expect(existsSync(join(project, 'cleaned.txt'))).toBe(false);
  });

  test('should_finalize: a failed or killed action ends the chain; otherwise it ends when nothing follows', () => {
    const chain = chainActions({ setup: 'a', cleanup: 'b' });
    expect(chain).toMatchObject({ type: 'setup', next: { type: 'agent', next: { type: 'cleanup' } } });
    expect(shouldFinalize(chain, 'succeeded')).toBe(false);
    expect(shouldFinalize(chain, 'failed')).toBe(true);
    expect(shouldFinalize(chain, 'killed')).toBe(true);
    expect(shouldFinalize(chain.next!.next!, 'succeeded')).toBe(true);
  });
});
