// Durable runs through the built CLI: `sage run --detach`, `sage interactions list`, `sage respond`,
// `sage runs show | list | prune`. Build first: npx tsc -p tsconfig.build.json.
import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-durable-cli-'));
  db = join(dir, 'sage.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
const json = <T = any>(text: string): T => JSON.parse(text) as T;

/** A Bash call the permission engine always asks about; its side effect appends a line to side.txt. */
const appendCall = (line: string) => ({
  name: 'Bash',
  input: { command: `node -e "require('fs').appendFileSync('side.txt', '${line}\\n')"` },
});

async function pending(runId: string, timeoutMs = 15_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const list = json<any[]>((await sage(['interactions', 'list', '--pending', '--json'])).stdout);
    const mine = list.find((i) => i.runId === runId);
    if (mine) return mine;
    if (Date.now() > deadline) throw new Error(`no pending request for ${runId}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function detach(turns: unknown[]): Promise<string> {
  const script = writeScript(turns);
  const started = await sage(['run', '--detach', '--json', '--model', `scripted:${script}`, 'append a line']);
  expect(started.stderr).toBe('');
  expect(started.code).toBe(0);
  const { runId } = json<{ runId: string }>(started.stdout);
  expect(runId).toMatch(/^run_/);
  return runId;
}

const sideLines = () => (existsSync(join(dir, 'side.txt')) ? readFileSync(join(dir, 'side.txt'), 'utf8').split('\n').filter(Boolean) : []);

describe('durable runs from the command line', { timeout: 240_000 }, () => {
  it('detaches, lists the ask, resumes on --allow to completion with the side effect once, and refuses a second answer', async () => {
    const runId = await detach([{ toolCalls: [appendCall('one')] }, { text: 'done' }]);
    const ask = await pending(runId);
    expect(ask).toMatchObject({ kind: 'confirm', status: 'pending', runId });
    expect(sideLines()).toEqual([]);

    const answered = await sage(['respond', ask.id, '--allow', '--user', 'alice', '--json']);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    const reply = json(answered.stdout);
    expect(reply).toMatchObject({ interactionId: ask.id, answeredBy: 'alice' });
    // The detached process may still hold the run when the answer lands (it releases it just after
    // asking): then that process is told (notified) and finishes the run; else this one resumes it.
    if (reply.delivered === 'notified') {
      for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
        if (json((await sage(['runs', 'show', runId, '--json'])).stdout).status !== 'running') break;
      }
    } else {
      expect(reply).toMatchObject({ delivered: 'resumed', status: 'completed' });
    }

    const shown = json((await sage(['runs', 'show', runId, '--json'])).stdout);
    expect(shown).toMatchObject({ id: runId, status: 'completed', finalText: 'done' });
    expect(sideLines()).toEqual(['one']);

    const again = await sage(['respond', ask.id, '--deny']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('already answered by alice at');
    expect(again.stderr.trim().split('\n')).toHaveLength(1);
    expect(sideLines()).toEqual(['one']);

    const list = json<any[]>((await sage(['runs', 'list', '--status', 'completed', '--json'])).stdout);
    expect(list.map((r) => r.id)).toEqual([runId]);
    expect(json<any[]>((await sage(['interactions', 'list', '--pending', '--json'])).stdout)).toEqual([]);
  });

  it('hands a --deny --message to the model as the tool result', async () => {
    const runId = await detach([{ toolCalls: [appendCall('never')] }, { text: 'understood' }]);
    const ask = await pending(runId);
    const denied = await sage(['respond', ask.id, '--deny', '--message', 'not on a Friday']);
    expect(denied.code).toBe(0);
    const shown = json<any>((await sage(['runs', 'show', runId, '--json', '--events', '100'])).stdout);
    expect(shown.status).toBe('completed');
    const result = shown.events.find((e: any) => e.type === 'tool.completed');
    expect(result.data.isError).toBe(true);
    expect(result.data.content).toContain('not on a Friday');
    expect(sideLines()).toEqual([]);
  });

  it('answers a question with --answer "Question=Label"', async () => {
    const runId = await detach([
      { toolCalls: [{ name: 'AskUserQuestion', input: { questions: [{ question: 'Which color?', header: 'Color', options: [{ label: 'red' }, { label: 'blue' }] }] } }] },
      { text: 'blue it is' },
    ]);
    const ask = await pending(runId);
    expect(ask.kind).toBe('questions');
    const bad = await sage(['respond', ask.id, '--answer', 'Which shape?=round']);
    expect(bad.code).toBe(2);
    const wrongKind = await sage(['respond', ask.id, '--allow']);
    expect(wrongKind.code).toBe(2);
    expect(wrongKind.stderr).toContain('--answer');
    const ok = await sage(['respond', ask.id, '--answer', 'Which color?=blue', '--json']);
    expect(ok.code).toBe(0);
    const shown = json<any>((await sage(['runs', 'show', runId, '--json', '--events', '200'])).stdout);
    expect(shown.status).toBe('completed');
    const result = shown.events.find((e: any) => e.type === 'tool.completed' && e.data.toolName === 'AskUserQuestion');
    expect(result.data.content).toContain('blue');
  });

  it('prunes finished runs by age and refuses an age it cannot read', async () => {
    const runId = await detach([{ text: 'nothing to do' }]);
    const deadline = Date.now() + 15_000;
    while (json<any>((await sage(['runs', 'show', runId, '--json'])).stdout).status !== 'completed') {
      if (Date.now() > deadline) throw new Error('the run did not complete');
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(json((await sage(['runs', 'prune', '--older-than', '30d', '--json'])).stdout)).toMatchObject({ runs: 0 });
    const bad = await sage(['runs', 'prune', '--older-than', '3 weeks']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('30d, 12h, 90m');
    expect(json((await sage(['runs', 'prune', '--older-than', '0m', '--json'])).stdout)).toMatchObject({ runs: 1 });
    const gone = await sage(['runs', 'show', runId]);
    expect(gone.code).toBe(1);
    expect(gone.stderr).not.toMatch(/\n\s+at /);
  });

  it('exits 2 on usage errors and 1 on unknown ids, with one line on stderr', async () => {
    const usage = [
      ['respond', 'x'],
      ['respond', 'x', '--allow', '--deny'],
      ['runs', 'list', '--status', 'bogus'],
      ['runs', 'prune'],
      ['runs', 'frobnicate'],
      ['interactions', 'list', '--bogus'],
    ];
    for (const args of usage) {
      const r = await sage(args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 2]);
      expect(r.stderr.trim().split('\n').length).toBeLessThanOrEqual(2);
    }
    const unknown = await sage(['respond', 'nope', '--allow']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No interaction with id "nope"');
    expect((await sage(['runs', 'show', 'run_nope'])).code).toBe(1);
    expect((await sage(['runs', 'resume', 'run_nope'])).code).toBe(1);
  });
});
