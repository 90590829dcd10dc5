// Risk and id prefixes through the built CLI: `sage interactions list` shows the gate's risk of each
// ask, `sage runs show` the risk of the pending one; every command taking a run or request id takes
// a unique start of it (8 characters or more). Build first: npm run build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-store.js';
import { runCli, writeScript } from '../support/cli.js';

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-ids-risk-cli-'));
  db = join(dir, 'sage.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
const json = <T = any>(text: string): T => JSON.parse(text) as T;

async function detachAsking(command: string): Promise<string> {
  const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command } }] }, { text: 'done' }]);
  const started = await sage(['run', '--detach', '--json', '--model', `scripted:${script}`, 'do it']);
  expect(started.code).toBe(0);
  return json<{ runId: string }>(started.stdout).runId;
}

async function pendingOf(runId: string): Promise<any> {
  for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const mine = json<any[]>((await sage(['interactions', 'list', '--pending', '--json'])).stdout).find((i) => i.runId === runId);
    if (mine) return mine;
    if (Date.now() > deadline) throw new Error(`no pending request for ${runId}`);
  }
}

describe('risk of an ask, from the command line', { timeout: 240_000 }, () => {
  it('tells a destructive rm -rf from npm test in interactions list (table and --json) and runs show', async () => {
    const rmRun = await detachAsking('rm -rf build --force');
    const testRun = await detachAsking('npm test');
    const rmAsk = await pendingOf(rmRun);
    const testAsk = await pendingOf(testRun);
    expect(rmAsk.risk).toBe('HIGH');
    expect(testAsk.risk).not.toBe('HIGH');
    expect(['LOW', 'MEDIUM', 'UNKNOWN']).toContain(testAsk.risk);

    const table = (await sage(['interactions', 'list', '--pending'])).stdout.split('\n');
    expect(table[0]).toMatch(/^ID\s+STATUS\s+KIND\s+RISK\s+REQUEST$/);
    expect(table.find((l) => l.startsWith(rmAsk.id))).toMatch(/\bconfirm\s+HIGH\s/);
    expect(table.find((l) => l.startsWith(testAsk.id))).toMatch(new RegExp(`\\bconfirm\\s+${testAsk.risk}\\s`));

    const shown = await sage(['runs', 'show', rmRun]);
    expect(shown.stdout).toMatch(new RegExp(`waiting  ${rmAsk.id} \\(pending, risk HIGH\\)`));
    expect(json((await sage(['runs', 'show', rmRun, '--json'])).stdout).pendingInteraction.risk).toBe('HIGH');
  });
});

describe('ids by a unique start, from the command line', { timeout: 240_000 }, () => {
  it('answers, shows and lists by a start of the id, and refuses a start that is too short', async () => {
    const runId = await detachAsking('rm -rf build --force');
    const ask = await pendingOf(runId);
    const runStart = runId.slice(0, 8);
    const askStart = ask.id.slice(0, runId.length + 3);

    const shown = await sage(['runs', 'show', runStart, '--json']);
    expect(shown.code).toBe(0);
    expect(json(shown.stdout).id).toBe(runId);
    expect(json<any[]>((await sage(['interactions', 'list', '--run', runStart, '--json'])).stdout).map((i) => i.id)).toEqual([ask.id]);

    const short = await sage(['runs', 'show', runId.slice(0, 7)]);
    expect(short.code).toBe(1);
    expect(short.stderr).toContain(`No run with id "${runId.slice(0, 7)}"`);

    const answered = await sage(['respond', askStart, '--deny', '--json']);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    expect(json(answered.stdout)).toMatchObject({ interactionId: ask.id, runId });
  });

  it('refuses a start that names several runs or requests with exit 2 and the matching ids', async () => {
    const store = await openSqliteStore(db);
    try {
      for (const id of ['run_same0001', 'run_same0002']) {
        await store.createRun({ id, userId: 'alice', sessionId: id, channel: 'cli', task: 't', options: { model: 'scripted:x' } }, null);
      }
      for (const id of ['run_same0001:c1:permission', 'run_same0001:c2:permission']) {
        await store.saveInteraction({ id, runId: 'run_same0001', kind: 'confirm', title: 'Allow Bash?', createdAt: new Date().toISOString() });
      }
    } finally {
      await store.close();
    }
    for (const args of [['runs', 'show', 'run_same'], ['runs', 'cancel', 'run_same0'], ['runs', 'resume', 'run_same'], ['runs', 'close', 'run_same'], ['interactions', 'list', '--run', 'run_same']]) {
      const r = await sage(args);
      expect([args.join(' '), r.code]).toEqual([args.join(' '), 2]);
      expect(r.stderr).toContain('starts more than one run id (run_same0001, run_same0002)');
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    }
    const respond = await sage(['respond', 'run_same0001:c', '--allow']);
    expect(respond.code).toBe(2);
    expect(respond.stderr).toContain('"run_same0001:c" starts more than one request id (run_same0001:c1:permission, run_same0001:c2:permission)');
    const cancelled = await sage(['runs', 'cancel', 'run_same0002', '--json']);
    expect(json(cancelled.stdout)).toMatchObject({ runId: 'run_same0002' });
    expect(json((await sage(['runs', 'show', 'run_same0001', '--json'])).stdout).status).not.toBe('cancelled');
  });
});
