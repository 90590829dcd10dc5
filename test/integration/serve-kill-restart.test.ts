// `sage serve` killed with SIGKILL while it holds a run at its approval, then started again at once
// on the same SQLite file: the new server takes the dead one's run over as it starts (not when the
// dead lease runs out), and an answer posted to it runs the approved tool. Build first (npm run
// build): this drives dist/cli/bin.js.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-store.js';
import { bin } from '../support/cli.js';

let dir: string;
let db: string;
let script: string;
const servers: ChildProcess[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-serve-kill-'));
  db = join(dir, 'sage.db');
  mkdirSync(join(dir, 'scripts'));
  script = join(dir, 'scripts', 'turns.json');
  writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'touch made-by-run' } }] }, { text: 'done' }] }));
});
afterEach(async () => {
  for (const s of servers.splice(0)) {
    if (s.exitCode !== null || s.signalCode !== null) continue;
    s.kill('SIGTERM');
    await new Promise((r) => s.once('close', r));
  }
  rmSync(dir, { recursive: true, force: true });
});

const env = () => ({ ...process.env, SAGE_HOME: dir, SAGE_DATABASE_URL: '', ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', FORCE_COLOR: '0', NO_COLOR: '1' });

/** Starts `sage serve` on a free port; resolves once it serves (its start-up recovery is done by then). */
async function serve(): Promise<{ base: string; child: ChildProcess }> {
  const args = [bin, 'serve', '--db', db, '--port', '0', '--root', dir, '--scripted-dir', join(dir, 'scripts'), '--log-level', 'warn'];
  const child = spawn(process.execPath, args, { cwd: dir, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  servers.push(child);
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /serving (http:\/\/\S+?) /.exec(out)?.[1];
      if (url) resolve({ base: url.replace(/\/$/, ''), child });
    });
    child.on('close', (code) => reject(new Error(`sage serve exited (${code}): ${err}`)));
  });
}

async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function ownerOf(runId: string): Promise<string | null> {
  const store = await openSqliteStore(db);
  try {
    return (await store.getRun(runId))?.owner ?? null;
  } finally {
    await store.close();
  }
}

describe('sage serve killed with SIGKILL and started again on the same SQLite file', { timeout: 240_000 }, () => {
  it("takes the dead server's run over as it starts, and an answer posted to it runs the tool", async () => {
    const first = await serve();
    const started = await fetch(`${first.base}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: 'touch a file', model: `scripted:${script}`, cwd: dir }) });
    expect(started.status).toBe(201);
    const runId = ((await started.json()) as { id: string }).id;
    const ask = await until('the ask', async () => {
      const listed = (await (await fetch(`${first.base}/interactions?runId=${encodeURIComponent(runId)}`)).json()) as { interactions: Array<{ id: string; status: string }> };
      return listed.interactions.find((i) => i.status === 'pending');
    });
    const deadOwner = await ownerOf(runId);
    expect(deadOwner).not.toBeNull();
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('close', r));

    const second = await serve();
    // Its start-up recovery knew the owner dead: the run is no longer the dead server's.
    expect(await ownerOf(runId)).not.toBe(deadOwner);
    const answered = await fetch(`${second.base}/interactions/${encodeURIComponent(ask.id)}/respond`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ kind: 'confirm', confirmed: true }) });
    expect(answered.status).toBe(200);
    await until('the approved tool to run', () => (existsSync(join(dir, 'made-by-run')) ? true : undefined));
  });
});
