// A foreground `sage run` is recorded in the store as it goes: killed with SIGKILL in the middle of
// a tool call, it is listed by `sage runs list` and finished by `sage runs recover` — the finished
// call not repeated, the interrupted one reported to the model, never re-run. Build first
// (npm run build): this drives dist/cli/bin.js.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-fg-kill-'));
  db = join(dir, 'sage.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '' });
const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: dir, env: env(), timeoutMs: 90_000 });
const sideLines = () => (existsSync(join(dir, 'side.txt')) ? readFileSync(join(dir, 'side.txt'), 'utf8').split('\n').filter(Boolean) : []);
/** A Bash call that appends `line` to side.txt, then (when `holdMs`) keeps running that long. */
const append = (line: string, holdMs = 0) => ({
  name: 'Bash',
  input: { command: `node -e "require('fs').appendFileSync('side.txt', '${line}\\n'); setTimeout(() => {}, ${holdMs})"` },
});

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a foreground run killed with SIGKILL', { timeout: 180_000 }, () => {
  it('is listed, and recovered to completion with no side effect repeated and the interrupted call reported', async () => {
    const script = writeScript([{ toolCalls: [append('a')] }, { toolCalls: [append('b', 60_000)] }, { text: 'done' }]);
    let pid: number | undefined;
    const run = runCli(['run', '--json', '--permission-mode', 'bypassPermissions', '--model', `scripted:${script}`, '--db', db, 'append two lines'], {
      cwd: dir,
      env: env(),
      timeoutMs: 90_000,
      onSpawn: (p) => (pid = p),
    });
    // The second call has done its side effect and is still running: kill the terminal's process.
    await until('the second side effect', () => (sideLines().includes('b') ? true : undefined));
    process.kill(pid!, 'SIGKILL');
    const killed = await run;
    expect(killed.code).toBeNull();
    const runId = killed.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { runId: string })[0]!.runId;

    const listed = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Array<{ id: string; status: string; channel: string }>;
    // Its owner is gone: never listed as running.
    expect(listed).toEqual([expect.objectContaining({ id: runId, status: 'orphaned' })]);

    // The dead owner is known at once on this host; recover takes the run over.
    const recovered = await until('the run to be recovered', async () => {
      const result = await sage(['runs', 'recover', '--json']);
      expect(result.code).toBe(0);
      const runs = (JSON.parse(result.stdout) as { runs: Array<{ runId: string; status: string }> }).runs;
      return runs.some((r) => r.runId === runId) ? runs : undefined;
    });
    expect(recovered).toEqual([expect.objectContaining({ runId, status: 'completed' })]);
    expect(sideLines()).toEqual(['a', 'b']);

    const events = (await sage(['runs', 'show', runId, '--json', '--events', '1000'])).stdout;
    const shown = JSON.parse(events) as { events?: Array<{ type: string; data: Record<string, unknown> }> };
    const results = (shown.events ?? []).filter((e) => e.type === 'tool.completed').map((e) => String(e.data.content));
    expect(results.some((c) => c.includes('interrupted by a restart'))).toBe(true);
  });

  it('while it waited for an approval in the terminal: the request is answered with sage respond, and the run finishes with the approved call run once (its owner is known dead: no lease to wait for)', async () => {
    const script = writeScript([{ toolCalls: [append('approved')] }, { text: 'finished' }]);
    const session = new TmuxSession(['run', '--model', `scripted:${script}`, '--db', db, 'append after approval'], { cwd: dir, env: env() as Record<string, string> });
    try {
      // `node -e` is of unknown risk, treated as HIGH: the prompt starts on Deny.
      await session.waitFor('❯ Deny', 30_000);
      // The process that shows the prompt (found by its unique script path), killed as a crash would.
      const pids = execFileSync('pgrep', ['-f', script], { encoding: 'utf8' }).trim().split('\n').map(Number);
      for (const p of pids) process.kill(p, 'SIGKILL');
    } finally {
      session.kill();
    }
    expect(sideLines()).toEqual([]);
    const pending = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as Array<{ id: string; runId: string; kind: string }>;
    expect(pending).toEqual([expect.objectContaining({ kind: 'confirm' })]);
    const result = await sage(['respond', pending[0]!.id, '--allow', '--json']);
    expect(result.code).toBe(0);
    const body = JSON.parse(result.stdout) as { status?: string; delivered: string };
    // The dead owner is known at once on this host: the answering process takes the run over (an
    // owner it cannot judge, of another host, would be told and the run taken over when its lease ends).
    const answered = body.delivered === 'resumed' ? body : await until('the run to be recovered', async () => {
      const recovered = await sage(['runs', 'recover', '--json']);
      const runs = (JSON.parse(recovered.stdout) as { runs: Array<{ runId: string; status: string }> }).runs;
      return runs.find((r) => r.runId === pending[0]!.runId);
    });
    expect(answered).toMatchObject({ status: 'completed' });
    expect(sideLines()).toEqual(['approved']);
  });
});
