// An ask's context through the built CLI: `sage interactions list`, `sage runs show` and the errors
// of `sage respond` name the task, the folder, who asks and the mode; decisions made by --auto say
// so; `sage demo` says who approved and that it removed its copy. Build first: npm run build.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

let dir: string;
let db: string;
let session: TmuxSession | undefined;
afterEach(() => {
  session?.kill();
  session = undefined;
});
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-ask-context-cli-'));
  db = join(dir, 'sage.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const sage = (args: string[], cwd = dir) => runCli([...args, '--db', db], { cwd, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
const json = <T = any>(text: string): T => JSON.parse(text) as T;

async function pendingOf(runId: string): Promise<any> {
  for (const deadline = Date.now() + 15_000; ; await new Promise((r) => setTimeout(r, 100))) {
    const mine = json<any[]>((await sage(['interactions', 'list', '--pending', '--json'])).stdout).find((i) => i.runId === runId);
    if (mine) return mine;
    if (Date.now() > deadline) throw new Error(`no pending request for ${runId}`);
  }
}

describe('the context of an ask, from the command line', { timeout: 240_000 }, () => {
  it('interactions list, runs show and a refused sage respond name the task, folder, asker and mode', async () => {
    const project = join(dir, 'calc');
    mkdirSync(join(project, '.git'), { recursive: true });
    const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'rm -rf build' } }] }, { text: 'done' }]);
    const started = await sage(['run', '--detach', '--json', '--model', `scripted:${script}`, 'Fix add() and publish\nThe add function subtracts.'], project);
    expect(started.code).toBe(0);
    const runId = json<{ runId: string }>(started.stdout).runId;
    const ask = await pendingOf(runId);
    expect(ask.context).toEqual({ task: 'Fix add() and publish', folder: 'calc', asker: { kind: 'run' }, risk: 'HIGH', mode: 'default' });

    const line = '“Fix add() and publish” · in calc · asked by the run · mode default';
    const table = (await sage(['interactions', 'list', '--pending'])).stdout.split('\n');
    const row = table.findIndex((l) => l.startsWith(ask.id));
    expect(table[row + 1]!.trim()).toBe(line);

    const shown = (await sage(['runs', 'show', runId])).stdout.split('\n');
    const waiting = shown.findIndex((l) => l.startsWith('waiting'));
    expect(shown[waiting + 1]!.trim()).toBe(line);

    // --text fits an input request, not this approval: the refusal says which request it was.
    const refused = await sage(['respond', ask.id, '--text', 'yes']);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('the request: “Fix add() and publish” · in calc · asked by the run · HIGH risk · mode default');
  });

  it('a call approved by --auto allow is shown as approved automatically, not by the user', async () => {
    const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'echo hi > out.txt' } }] }, { text: 'done' }]);
    const ran = await sage(['run', '--non-interactive', '--auto', 'allow', '--model', `scripted:${script}`, 'write out']);
    expect(ran.code).toBe(0);
    const runId = json<any[]>((await sage(['runs', 'list', '--json'])).stdout)[0].id as string;
    const shown = (await sage(['runs', 'show', runId, '--events', '50'])).stdout;
    expect(shown).toContain('approved automatically (--auto allow)');
    expect(shown).not.toContain('approved by the user');
  });

  it('sage demo under --auto allow says no person was asked, and that it removed its scratch copy', async () => {
    // The demo keeps its run in memory: it takes no --db.
    const demo = await runCli(['demo', '--non-interactive', '--auto', 'allow'], { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
    expect(demo.code).toBe(0);
    expect(demo.stdout).not.toContain('without your yes');
    expect(demo.stdout).toContain('Every ask was approved automatically (--auto allow): no person was asked.');
    expect(demo.stdout).toMatch(/Removed the scratch copy \S*sage-demo-\S+ \(--keep keeps it\)\./);
  });

  it('the terminal prompt shows the context under its header, and the reason without the command shown below it', async () => {
    session = new TmuxSession(['demo']);
    const screen = await session.waitForPrompt('Bash wants permission', 1);
    const lines = screen.split('\n');
    const header = lines.findIndex((l) => l.includes('◆ Bash wants permission'));
    expect(lines[header + 1]).toMatch(/^ {2}“The tests of this project fail\. Find th…” · in sage-demo-\w+ · asked by the run · MEDIUM risk · mode default$/);
    expect(lines[header + 2]).toBe('  $ node test.js');
    const why = lines.find((l) => l.startsWith('  why:'));
    expect(why).toMatch(/^ {2}why: Bash command is MEDIUM risk/);
    expect(why).not.toContain('node test.js');
  });
});
