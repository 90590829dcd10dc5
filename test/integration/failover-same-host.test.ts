// Failover on the same host: a `sage run` killed with SIGKILL while it waits for an approval is
// known dead at once (its pid is gone, or names another process), so `sage runs list` does not
// call its run running, `sage runs recover` takes it over without waiting for the lease to run out,
// and `sage respond` makes the approved tool run. A live owner's run is never taken over. Build
// first (npm run build): this drives dist/cli/bin.js.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-store.js';
import { dropSchema, TEST_DATABASE_URL, testSchemaName } from '../../src/store/test-support/postgres-test-db.js';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

interface Backend {
  name: string;
  args: () => string[];
  env: () => Record<string, string>;
  cleanup(): Promise<void>;
}

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-failover-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sqlite: Backend = {
  name: 'SQLite',
  args: () => ['--db', join(dir, 'sage.db')],
  env: () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: '' }),
  cleanup: async () => {},
};

function postgres(): Backend {
  const schema = testSchemaName('failover');
  return {
    name: 'Postgres',
    args: () => [],
    env: () => ({ SAGE_HOME: dir, SAGE_DATABASE_URL: TEST_DATABASE_URL, SAGE_DATABASE_SCHEMA: schema }),
    cleanup: () => dropSchema(schema),
  };
}

const marker = () => join(dir, 'side.txt');
const sideLines = () => (existsSync(marker()) ? readFileSync(marker(), 'utf8').split('\n').filter(Boolean) : []);
const approvedCall = { name: 'Bash', input: { command: `node -e "require('fs').appendFileSync('side.txt', 'approved\\n')"` } };

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

interface Listed { id: string; status: string; owner: string | null; ownerDied?: { pid: number; host: string } }
interface Pending { id: string; runId: string; kind: string }

/** A `sage run` in a terminal, waiting at its approval prompt for a call that appends to side.txt. */
async function waitingRun(backend: Backend) {
  const script = writeScript([{ toolCalls: [approvedCall] }, { text: 'finished' }]);
  const session = new TmuxSession(['run', '--model', `scripted:${script}`, ...backend.args(), 'append after approval'], { cwd: dir, env: backend.env() });
  const sage = (args: string[]) => runCli([...args, ...backend.args()], { cwd: dir, env: backend.env(), timeoutMs: 90_000 });
  // `node -e` is of unknown risk, treated as HIGH: the prompt starts on Deny.
  await session.waitFor('❯ Deny', 30_000);
  const pending = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as Pending[];
  expect(pending).toEqual([expect.objectContaining({ kind: 'confirm' })]);
  /** Kills the process that shows the prompt (found by its unique script path), as a crash would. */
  const kill = () => {
    let found = '';
    try {
      found = execFileSync('pgrep', ['-f', script], { encoding: 'utf8' });
    } catch {
      // None left (the run ended): nothing to kill.
    }
    for (const p of found.trim().split('\n').filter(Boolean).map(Number)) {
      try {
        process.kill(p, 'SIGKILL');
      } catch {
        // Gone between the look-up and the kill.
      }
    }
    session.kill();
  };
  return { session, sage, ask: pending[0]!, kill };
}

describe.each([sqlite, postgres()])('a sage run killed with SIGKILL at its ask ($name)', { timeout: 180_000 }, (backend) => {
  afterEach(() => backend.cleanup());

  it('is taken over by a sage respond --allow given right after the kill: the approved tool runs', async () => {
    const { sage, ask, kill } = await waitingRun(backend);
    kill();
    const answered = await sage(['respond', ask.id, '--allow', '--json']);
    expect(answered.code).toBe(0);
    expect(JSON.parse(answered.stdout)).toMatchObject({ delivered: 'resumed', status: 'completed' });
    await until('the approved tool to run', () => (sideLines().length > 0 ? true : undefined));
    expect(sideLines()).toEqual(['approved']);
  });
});

describe('a sage run killed with SIGKILL at its ask (SQLite)', { timeout: 180_000 }, () => {
  it('is not listed as running, and sage runs recover takes it over at once', async () => {
    const { sage, ask, kill } = await waitingRun(sqlite);
    kill();
    const listed = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Listed[];
    expect(listed).toEqual([expect.objectContaining({ id: ask.runId, status: 'orphaned', ownerDied: expect.objectContaining({ pid: expect.any(Number) }) })]);
    const text = (await sage(['runs', 'list'])).stdout;
    expect(text).toContain('orphaned');
    expect(text).not.toMatch(/\brunning\b/);
    expect((await sage(['runs', 'show', ask.runId])).stdout).toMatch(/status +orphaned \(owner pid \d+ on .* died: sage runs recover/);

    const recovered = await sage(['runs', 'recover', '--json']);
    expect(recovered.code).toBe(0);
    const runs = (JSON.parse(recovered.stdout) as { runs: Array<{ runId: string; status: string; pendingInteractionId: string | null }> }).runs;
    // Taken over and driven to its next stop: the same approval, waiting in the store.
    expect(runs).toEqual([{ runId: ask.runId, status: 'suspended', pendingInteractionId: ask.id }]);
    expect((JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Listed[])[0]).toMatchObject({ status: 'suspended', owner: null });
    expect(sideLines()).toEqual([]);
  });

  it('is dead when its pid now names another process (started at another time)', async () => {
    const { sage, ask, kill } = await waitingRun(sqlite);
    const owner = (JSON.parse((await sage(['runs', 'show', ask.runId, '--json'])).stdout) as Listed).owner!;
    kill();
    // The kernel hands the dead owner's pid to an unrelated process: a lease naming a live pid whose
    // start time is not the owner's.
    const stranger: ChildProcess = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    try {
      const store = await openSqliteStore(join(dir, 'sage.db'));
      try {
        const [recorded] = await store.getOwners([owner]);
        expect(recorded).toBeDefined();
        await store.registerOwner({ ...recorded!, pid: stranger.pid! });
      } finally {
        await store.close();
      }
      const listed = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Listed[];
      expect(listed[0]).toMatchObject({ status: 'orphaned', ownerDied: { pid: stranger.pid } });
      const runs = (JSON.parse((await sage(['runs', 'recover', '--json'])).stdout) as { runs: Array<{ runId: string }> }).runs;
      expect(runs.map((r) => r.runId)).toEqual([ask.runId]);
    } finally {
      stranger.kill('SIGKILL');
    }
  });
});

describe('a sage run alive at its ask (SQLite)', { timeout: 180_000 }, () => {
  it('is never taken over: recover leaves it, and an answer from another process is handed to it', async () => {
    const { session, sage, ask, kill } = await waitingRun(sqlite);
    try {
      const owner = (JSON.parse((await sage(['runs', 'show', ask.runId, '--json'])).stdout) as Listed).owner;
      expect((JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Listed[])[0]).toMatchObject({ status: 'running', owner });
      expect((JSON.parse((await sage(['runs', 'recover', '--json'])).stdout) as { runs: unknown[] }).runs).toEqual([]);

      const answered = await sage(['respond', ask.id, '--allow', '--json']);
      expect(answered.code).toBe(0);
      // Handed to the owner, not taken over by the answering process: it ran nothing.
      expect(JSON.parse(answered.stdout)).toMatchObject({ delivered: 'notified' });
      expect(sideLines()).toEqual([]);
      // The owner hears it (a foreground sage run then lets the answered run go to the store).
      await session.waitFor('answered from another process', 30_000);
      await until('the owner to let the run go', async () => {
        const shown = JSON.parse((await sage(['runs', 'show', ask.runId, '--json'])).stdout) as Listed;
        return shown.owner === null ? shown : undefined;
      });
      const runs = (JSON.parse((await sage(['runs', 'recover', '--json'])).stdout) as { runs: Array<{ runId: string; status: string }> }).runs;
      expect(runs).toEqual([expect.objectContaining({ runId: ask.runId, status: 'completed' })]);
      expect(sideLines()).toEqual(['approved']);
    } finally {
      kill();
    }
  });
});
