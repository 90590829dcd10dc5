// A live `sage serve` and the CLI or a second instance beside it (issue 10, items 7 and 8), through
// the built CLI (npm run build first): `sage respond` from another process (SQLite), or instance B
// over HTTP (Postgres), resumes a run the server holds in memory at once; a server whose store holds
// runs it cannot rebuild starts anyway, failing those runs with the reason and resuming the others.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../../src/store/test-support/postgres-test-db.js';
import { bin, runCli } from '../support/cli.js';

let dir: string;
let db: string;
let script: string;
let server: ChildProcess | undefined;
let serverErr = '';
const extraServers: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-serve-wake-'));
  db = join(dir, 'sage.db');
  mkdirSync(join(dir, 'scripts'));
  script = join(dir, 'scripts', 'turns.json');
  // One Bash call the permission engine asks about, then the final text (then the next-message ask).
  writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'touch made-by-run' } }] }, { text: 'done' }] }));
});
afterEach(async () => {
  if (server && server.exitCode === null && server.signalCode === null) {
    server.kill('SIGTERM');
    await new Promise((r) => server!.once('close', r));
  }
  server = undefined;
  for (const s of extraServers.splice(0)) {
    if (s.exitCode !== null || s.signalCode !== null) continue;
    s.kill('SIGTERM');
    await new Promise((r) => s.once('close', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, SAGE_HOME: dir, SAGE_DATABASE_URL: '', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', FORCE_COLOR: '0', NO_COLOR: '1' });

/** Starts `sage serve` on a free port (SQLite at db, or Postgres through `pgEnv`); resolves to its base URL once it serves. */
async function serve(pgEnv?: Record<string, string>): Promise<string> {
  serverErr = '';
  const store = pgEnv ? [] : ['--db', db];
  const child = spawn(process.execPath, [bin, 'serve', ...store, '--port', '0', '--root', dir, '--scripted-dir', join(dir, 'scripts'), '--log-level', 'warn'], { cwd: dir, env: { ...env(), ...pgEnv }, stdio: ['ignore', 'pipe', 'pipe'] });
  if (server) extraServers.push(child);
  else server = child;
  child.stderr!.on('data', (d: Buffer) => (serverErr += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /serving (http:\/\/\S+?) /.exec(out)?.[1];
      if (url) resolve(url.replace(/\/$/, ''));
    });
    child.on('close', (code) => reject(new Error(`sage serve exited (${code}): ${serverErr}`)));
  });
}

const getJson = async (url: string) => (await fetch(url)).json() as Promise<any>;

async function interactions(base: string, runId: string): Promise<any[]> {
  return (await getJson(`${base}/interactions?runId=${encodeURIComponent(runId)}`)).interactions as any[];
}

async function until<T>(check: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out; server stderr: ${serverErr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('sage serve on SQLite with the CLI beside it', { timeout: 240_000 }, () => {
  it('resumes a run it holds in memory when `sage respond` answers from another process (5 rounds)', async () => {
    const base = await serve();
    const times: number[] = [];
    for (let round = 0; round < 5; round++) {
      const started = await fetch(`${base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: `round ${round}`, model: `scripted:${script}`, cwd: dir }) });
      expect(started.status).toBe(201);
      const runId = ((await started.json()) as { id: string }).id;
      const ask = await until(async () => (await interactions(base, runId)).find((i) => i.status === 'pending'));
      expect(ask.kind).toBe('confirm');

      const answered = await runCli(['respond', ask.id, '--allow', '--db', db, '--json'], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
      const t0 = Date.now();
      expect(answered.stderr).toBe('');
      expect(answered.code).toBe(0);
      // The server drives the run: the CLI stores the answer and leaves the run to it. The status it
      // prints is a snapshot of a run another process is moving: still waiting in memory (running),
      // released for the rebuild that takes the answer (suspended), or already at its next ask (idle).
      const printed = JSON.parse(answered.stdout) as { status: string };
      expect(printed).toMatchObject({ interactionId: ask.id, delivered: 'notified' });
      expect(['running', 'suspended', 'idle']).toContain(printed.status);

      // The server resumed it: the tool ran and the run asks for its next message.
      const next = await until(async () => (await interactions(base, runId)).find((i) => i.id !== ask.id && i.status === 'pending'));
      times.push(Date.now() - t0);
      expect(next.kind).toBe('input');
      // It answered and waits for the next message: idle, and the store names the ask.
      expect(await getJson(`${base}/runs/${runId}`)).toMatchObject({ status: 'idle', waitingFor: 'message', pendingInteractionId: next.id });
      if (round === 0) {
        // Another process reading the store sees the same, while the server still holds the run in memory.
        const shown = await runCli(['runs', 'show', runId, '--db', db, '--json'], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
        expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'idle', pendingInteractionId: next.id, pendingInteraction: { id: next.id, status: 'pending' } });
      }
    }
    const sorted = [...times].sort((x, y) => x - y);
    console.log(`[wake] sage respond -> live sage serve (SQLite), answer to next ask seen: p50=${sorted[2]} ms max=${sorted[4]} ms`);
  });

  it('starts with runs it cannot rebuild, fails each with the reason (API and `sage runs show`), and resumes the others', async () => {
    const store = await openSqliteStore(db);
    const run = (id: string, options: Record<string, unknown>) => store.createRun({ id, userId: 'local', sessionId: id, channel: 'web', task: 'touch a file', options }, null);
    await run('run_ok', { model: `scripted:${script}`, cwd: dir });
    // Scripted models from this folder were allowed when it was queued; the server now reads only scripts/.
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify({ turns: [{ text: 'hi' }] }));
    await run('run_script_off', { model: `scripted:${elsewhere}`, cwd: dir });
    await run('run_no_key', { model: 'anthropic:claude-sonnet-4-5', cwd: dir });
    await run('run_bad_options', { model: `scripted:${script}`, cwd: dir, frobnicate: true });
    await store.close();

    const base = await serve();
    for (const id of ['run_script_off', 'run_no_key', 'run_bad_options']) {
      const view = await until(async () => {
        const v = await getJson(`${base}/runs/${id}`);
        return v.status === 'failed' ? v : undefined;
      });
      expect(view.error.code).toBe('run_rebuild_failed');
      expect(view.error.message).toMatch(new RegExp(`^Run ${id} cannot be resumed: `));
      const shown = await runCli(['runs', 'show', id, '--db', db], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
      expect(shown.code).toBe(0);
      expect(shown.stdout).toMatch(new RegExp(`error +run_rebuild_failed: Run ${id} cannot be resumed: `));
      // Logged by the server.
      expect(serverErr).toContain(`Run ${id} cannot be resumed`);
    }
    expect((await getJson(`${base}/runs/run_no_key`)).error.message).toMatch(/ANTHROPIC_API_KEY|key/i);
    expect((await getJson(`${base}/runs/run_bad_options`)).error.message).toMatch(/frobnicate/);
    // Everything else is served: the good run was resumed and waits for its approval.
    const ask = await until(async () => (await interactions(base, 'run_ok')).find((i) => i.status === 'pending'));
    expect(ask.kind).toBe('confirm');
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });

  it('resumes a run instance A holds when instance B accepts its answer over HTTP, on Postgres (10 rounds, two sage serve)', async () => {
    const schema = testSchemaName('serve2');
    const pgEnv = { SAGE_DATABASE_URL: TEST_DATABASE_URL, SAGE_DATABASE_SCHEMA: schema };
    try {
      const a = await serve(pgEnv);
      const b = await serve(pgEnv);
      const times: number[] = [];
      for (let round = 0; round < 10; round++) {
        const started = await fetch(`${a}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: `round ${round}`, model: `scripted:${script}`, cwd: dir }) });
        expect(started.status).toBe(201);
        const runId = ((await started.json()) as { id: string }).id;
        const ask = await until(async () => (await interactions(b, runId)).find((i) => i.status === 'pending'));
        const t0 = Date.now();
        const answered = await fetch(`${b}/interactions/${encodeURIComponent(ask.id)}/respond`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'confirm', confirmed: true }) });
        expect(answered.status).toBe(200);
        // Resumed: the tool ran and the run asks for its next message (seen through either instance).
        const next = await until(async () => (await interactions(b, runId)).find((i) => i.id !== ask.id && i.status === 'pending'));
        times.push(Date.now() - t0);
        expect(next.kind).toBe('input');
      }
      const sorted = [...times].sort((x, y) => x - y);
      console.log(`[wake] two sage serve on Postgres, answer on B, next ask seen: p50=${sorted[5]} ms max=${sorted[9]} ms`);
    } finally {
      // Both instances stop before their schema goes.
      for (const s of [...extraServers.splice(0), ...(server ? [server] : [])]) {
        if (s.exitCode !== null || s.signalCode !== null) continue;
        s.kill('SIGTERM');
        await new Promise((r) => s.once('close', r));
      }
      server = undefined;
      await dropSchema(schema);
    }
  });
});
