import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DurableRunner } from '../../durable/durable-runner.js';
import type { RunEvent } from '../../events/index.js';
import type { InteractionRequest, InteractionResponder } from '../../interaction/index.js';
import { createRunFactory, type NewRun } from '../../runtime/create-run.js';
import { openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';

/**
 * An ACP agent (our fake, on the SDK's agent side) as a run's worker: its permission requests reach
 * Sage's gate and people; its file and shell access through the client capabilities is Sage's to
 * allow; a file outside the session's folders is refused without asking.
 */
const fakeAgent = fileURLToPath(new URL('./test-support/fake-agent.ts', import.meta.url));
/** tsx by its absolute URL: the agent runs in the project's folder, where no node_modules is. */
const tsx = import.meta.resolve('tsx');
let dir: string;
let home: string;
let project: string;
let outside: string;
let store: Store;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-acp-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  outside = join(dir, 'outside');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
  mkdirSync(outside);
  writeFileSync(join(project, 'notes.txt'), 'hello from the project\n');
  writeFileSync(join(outside, 'secret.txt'), 'outside secret\n');
  symlinkSync(outside, join(project, 'link-out'));
  writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ permissions: { deny: ['Bash(rm *)'] } }));
  store = await openSqliteStore(':memory:');
});
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Played {
  status: string;
  results: Array<Record<string, unknown>>;
  asked: InteractionRequest[];
  events: RunEvent[];
  finalText: string;
}

async function play(key: string, plan: unknown[], answer: (r: InteractionRequest) => Record<string, unknown> | undefined, during?: (cancel: () => void, events: RunEvent[]) => void, extra: Partial<NewRun> = {}): Promise<Played> {
  const asked: InteractionRequest[] = [];
  const events: RunEvent[] = [];
  const runId = `run_acp_${key}`;
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
    const spec = await factory.runSpecInput('do it', {
      surface: 'terminal',
      model: 'agent:acp',
      cwd: project,
      oneTask: true,
      agent: { name: 'acp', command: [process.execPath, '--import', tsx, fakeAgent], env: { FAKE_ACP_PLAN: JSON.stringify(plan) } },
      ...extra,
    });
    const handle = await runner.start('do it', { ...spec, runId });
    during?.(() => handle.run.cancel('the person stopped it'), events);
    const outcome = await handle.outcome;
    const match = /RESULTS (.*)$/s.exec(outcome.finalText);
    return { status: outcome.status, results: match ? (JSON.parse(match[1]!) as Array<Record<string, unknown>>) : [], asked, events, finalText: outcome.finalText };
  } finally {
    await runner.close();
  }
}

describe('an ACP agent through Sage\'s gate', { timeout: 30_000 }, () => {
  test('a permission request is asked of the person: allow picks allow_once, deny picks reject_once', async () => {
    const allowed = await play('allow', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch x.txt' } } }], () => ({ kind: 'confirm', confirmed: true }));
    expect(allowed.status).toBe('completed');
    expect(allowed.asked).toEqual([expect.objectContaining({ toolName: 'Bash', input: { command: 'touch x.txt' } })]);
    expect(allowed.results).toEqual([{ permission: 'yes' }]);
    const denied = await play('deny', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch y.txt' } } }], () => ({ kind: 'confirm', confirmed: false, message: 'no' }));
    expect(denied.results).toEqual([{ permission: 'no' }]);
    expect(denied.events).toContainEqual(expect.objectContaining({ type: 'agent.session' }));
  });

  test('the agent\'s file access is Sage\'s: a read inside is served, a write outside (also through a symlink or ..) is refused without asking', async () => {
    const played = await play(
      'files',
      [
        { read: join(project, 'notes.txt') },
        { read: join(outside, 'secret.txt') },
        { read: join(project, 'link-out', 'secret.txt') },
        { write: { path: join(project, '..', 'outside', 'planted.txt'), content: 'x' } },
        { write: { path: join(project, 'made.txt'), content: 'made by the agent' } },
      ],
      () => ({ kind: 'confirm', confirmed: true }),
    );
    expect(played.status).toBe('completed');
    expect(played.results[0]).toEqual({ read: 'hello from the project\n' });
    expect(String(played.results[1]!.error)).toContain('outside the session');
    expect(String(played.results[2]!.error)).toContain('outside the session');
    expect(String(played.results[3]!.error)).toContain('outside the session');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    // The write inside was asked (Write is not read-only) and approved.
    expect(played.results[4]).toEqual({ write: 'ok' });
    expect(readFileSync(join(project, 'made.txt'), 'utf8')).toBe('made by the agent');
    expect(played.asked.map((a) => a.toolName)).toEqual(['Write']);
    expect(JSON.stringify(played.finalText)).not.toContain('outside secret');
  });

  test('a terminal command is judged by Sage\'s Bash rules: a deny rule refuses it; an approved permission is not asked again', async () => {
    writeFileSync(join(project, 'victim.txt'), 'keep me');
    const played = await play(
      'terminal',
      [
        { terminal: { command: 'rm', args: ['-f', 'victim.txt'] } },
        { permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch from-terminal.txt' } } },
        { terminal: { command: 'touch', args: ['from-terminal.txt'] } },
      ],
      () => ({ kind: 'confirm', confirmed: true }),
    );
    expect(played.status).toBe('completed');
    expect(String(played.results[0]!.error)).toContain('Sage denied');
    expect(existsSync(join(project, 'victim.txt'))).toBe(true);
    expect(played.results[1]).toEqual({ permission: 'yes' });
    expect(played.results[2]).toMatchObject({ exitCode: 0 });
    expect(existsSync(join(project, 'from-terminal.txt'))).toBe(true);
    // Asked once (the permission request), not again for the terminal that carried it out.
    expect(played.asked).toHaveLength(1);
  });

  test('cancel while a permission request waits: the request is answered cancelled and the run is cancelled', async () => {
    const played = await play('cancel', [{ permission: { kind: 'execute', title: 'Run touch', rawInput: { command: 'touch never.txt' } } }, { terminal: { command: 'touch', args: ['never.txt'] } }], () => undefined, (cancel, events) => {
      const timer = setInterval(() => {
        if (events.some((e) => e.type === 'interaction.requested')) {
          clearInterval(timer);
          cancel();
        }
      }, 20);
    });
    expect(played.status).toBe('cancelled');
    expect(existsSync(join(project, 'never.txt'))).toBe(false);
    expect(played.events.some((e) => e.type === 'interaction.cancelled')).toBe(true);
  });
});
