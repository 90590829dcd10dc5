// Risk and id prefixes through the built CLI: `sage interactions list` shows the gate's risk of each
// ask, `sage runs show` the risk of the pending one. Build first: npm run build.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
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
