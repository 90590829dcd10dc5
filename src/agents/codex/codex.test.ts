import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest, InteractionResponder } from '../../interaction/index.js';
import { createRunFactory } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';

/** Codex (a fake app-server speaking its JSON-RPC) as a run's worker: its approval requests through Sage's gate and people. */
const fakeServer = fileURLToPath(new URL('./test-support/fake-app-server.mjs', import.meta.url));
let dir: string;
let home: string;
let project: string;
let store: Store;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-codex-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)', 'Write(./protected/**)', 'Read(./vault/**)'] } }));
  store = await openSqliteStore(':memory:');
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function play(key: string, plan: unknown[], answer: (r: InteractionRequest) => Record<string, unknown> | undefined, during?: (cancel: () => void, events: RunEvent[]) => void) {
  const asked: InteractionRequest[] = [];
  const events: RunEvent[] = [];
  const runId = `run_codex_${key}`;
  const responder: InteractionResponder = {
    deliver(request, broker) {
      asked.push(request);
      const response = answer(request);
      if (response) void broker.respond({ requestId: request.id, ...response });
    },
  };
  const factory = createRunFactory({ store, home, terminal: { runId, responder, onEvent: (e) => events.push(e) } });
  const runner = new DurableRunner({ store, runtime: factory });
  await runner.open();
  try {
    const spec = await factory.admitRun({ task: 'do it', surface: 'terminal', model: 'agent:codex', cwd: project, oneTask: true, agent: { name: 'codex', command: [process.execPath, fakeServer], env: { FAKE_CODEX_PLAN: JSON.stringify(plan) } } });
    const handle = await runner.start('do it', { ...spec, runId });
    during?.(() => handle.run.cancel('stopped'), events);
    const outcome = await handle.outcome;
    const match = /RESULTS (.*)$/s.exec(outcome.finalText);
    return { status: outcome.status, results: match ? (JSON.parse(match[1]!) as Array<Record<string, unknown>>) : [], asked, events, error: outcome.error };
  } finally {
    await runner.close();
  }
}

describe('Codex through Sage\'s gate (fake app-server)', { timeout: 30_000 }, () => {
  test('command approvals: allow → accept (the command runs), always → acceptForSession, a deny rule → decline without asking', async () => {
    let n = 0;
    const played = await play('commands', [{ command: 'touch once.txt' }, { command: 'touch always.txt' }, { command: 'rm -rf .' }], () => ({ kind: 'confirm', confirmed: true, ...(++n === 2 ? { remember: 'session' } : {}) }));
    expect(played.status).toBe('completed');
    expect(played.results).toEqual([{ decision: 'accept' }, { decision: 'acceptForSession' }, { decision: 'decline' }]);
    expect(existsSync(join(project, 'once.txt'))).toBe(true);
    expect(played.asked.map((a) => ((a as { input?: { command?: string } }).input?.command))).toEqual(['touch once.txt', 'touch always.txt']);
    expect(played.events).toContainEqual(expect.objectContaining({ type: 'agent.session' }));
  });

  test("a command Codex wraps in /bin/bash -lc is judged and shown as its script: a read-only one runs unasked, the person sees the script, a deny rule still declines", async () => {
    const played = await play('wrapped', [{ command: "/bin/bash -lc 'ls -la'" }, { command: "/bin/bash -lc 'touch wrapped.txt'" }, { command: "/bin/bash -lc 'rm -rf wrapped.txt'" }, { command: "/bin/bash -lc 'touch a.txt' extra" }], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.results).toEqual([{ decision: 'accept' }, { decision: 'accept' }, { decision: 'decline' }, { decision: 'accept' }]);
    expect(played.asked.map((a) => ((a as { input?: { command?: string } }).input?.command))).toEqual(['touch wrapped.txt', "/bin/bash -lc 'touch a.txt' extra"]);
  });

  test('an MCP tool call Codex makes without asking is recorded as its own, ungated', async () => {
    const played = await play('mcp', [{ mcpToolCall: { server: 'everything', tool: 'echo', arguments: { message: 'hi' } } }], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.status).toBe('completed');
    expect(played.asked).toHaveLength(0);
    expect(played.events).toContainEqual(expect.objectContaining({
      type: 'tool.completed',
      data: expect.objectContaining({ toolName: 'mcp__everything__echo', content: 'Echo: hi', ungated: true }),
    }));
  });

  test('a file change is judged by the Write rules of its files; a server request Sage does not handle is answered with an error', async () => {
    mkdirSync(join(project, 'protected'), { recursive: true });
    const played = await play('files', [{ fileChange: { path: join(project, 'protected', 'x.txt'), content: 'no' } }, { fileChange: { path: join(project, 'ok.txt'), content: 'yes' } }, { userInput: true }], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.results).toEqual([{ decision: 'decline' }, { decision: 'accept' }, { error: -32601 }]);
    expect(existsSync(join(project, 'protected', 'x.txt'))).toBe(false);
    expect(existsSync(join(project, 'ok.txt'))).toBe(true);
    expect(played.asked.map((a) => a.toolName)).toEqual(['Write']);
  });

  test('a command\'s folder is judged with it: outside the session it is declined unasked; inside, a Read deny on it holds and the person sees the cd', async () => {
    const outside = join(dir, 'outside');
    mkdirSync(outside, { recursive: true });
    mkdirSync(join(project, 'vault'), { recursive: true });
    writeFileSync(join(project, 'vault', 'key'), 'vault secret');
    mkdirSync(join(project, 'sub'), { recursive: true });
    const played = await play('cwd', [
      { command: 'touch planted.txt', cwd: outside },
      { command: 'touch planted.txt', cwd: join(project, '..', 'outside') },
      { command: 'cat key', cwd: join(project, 'vault') },
      { command: 'touch made.txt', cwd: join(project, 'sub') },
    ], () => ({ kind: 'confirm', confirmed: true }));
    expect(played.status).toBe('completed');
    expect(played.results).toEqual([{ decision: 'decline' }, { decision: 'decline' }, { decision: 'decline' }, { decision: 'accept' }]);
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect(played.asked.map((a) => ((a as { input?: { command?: string } }).input?.command))).toEqual([`cd ${join(project, 'sub')} && touch made.txt`]);
    expect(existsSync(join(project, 'sub', 'made.txt'))).toBe(true);
  });

  test('cancel while an approval waits: the turn is interrupted, the run cancelled, nothing ran', async () => {
    const played = await play('cancel', [{ command: 'touch never.txt' }], () => undefined, (cancel, events) => {
      const timer = setInterval(() => {
        if (events.some((e) => e.type === 'interaction.requested')) {
          clearInterval(timer);
          cancel();
        }
      }, 20);
    });
    expect(played.status).toBe('cancelled');
    expect(existsSync(join(project, 'never.txt'))).toBe(false);
  });
});
