// Subagents and skills end to end through the built CLI (npm run build first: drives dist/cli/bin.js):
// a parent whose Explore subagent tries Write (not its tool) and Bash rm (denied by the parent's
// rule), `sage skills list --json`, and a subagent's ask answered with `sage respond` after the
// process that showed it was killed with SIGKILL.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runEventSchema } from '../../src/events/index.js';
import { trustFolder } from '../../src/permission/trusted-folders.js';
import { runCli } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

let dir: string;
let project: string;
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-subagents-cli-')));
  project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'notes.txt'), 'the notes\n');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const env = () => ({ SAGE_HOME: join(dir, 'home'), SAGE_DATABASE_URL: '' });
function script(value: unknown): string {
  const file = join(dir, 'script.json');
  writeFileSync(file, JSON.stringify(value));
  return file;
}

describe('sage run --json with a subagent', () => {
  it("an Explore subagent's Write is refused (not its tool), its Bash rm denied by the parent's rule; its report is the Task result", async () => {
    const file = script({
      turns: [{ toolCalls: [{ name: 'Task', input: { description: 'explore', prompt: 'read the notes', subagent_type: 'Explore' } }] }, { text: 'parent done' }],
      agents: {
        Explore: {
          turns: [
            { toolCalls: [{ name: 'Write', input: { file_path: 'x.txt', content: 'x' } }, { name: 'Bash', input: { command: 'rm notes.txt' } }, { name: 'Read', input: { file_path: 'notes.txt' } }] },
            { text: 'the notes say: the notes' },
          ],
        },
      },
    });
    const result = await runCli(['run', 'explore', '--model', `scripted:${file}`, '--json', '--non-interactive', '--auto', 'allow', '--deny', 'Bash(rm:*)', '--db', join(dir, 'sage.db')], { cwd: project, env: env() });
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((l) => runEventSchema.parse(JSON.parse(l)));
    const mine = events.filter((e) => !e.data.agent);
    const theirs = events.filter((e) => e.data.agent?.type === 'Explore');
    const childCalls = theirs.filter((e) => e.type === 'tool.completed').map((e) => e.data as { toolName: string; isError: boolean; content: string });
    expect(childCalls.map((c) => [c.toolName, c.isError])).toEqual([['Write', true], ['Bash', true], ['Read', false]]);
    expect(childCalls[0]!.content).toMatch(/Write/);
    expect(theirs.find((e) => e.type === 'permission.decided' && e.data.toolName === 'Bash')?.data).toMatchObject({ behavior: 'deny', rule: 'Bash(rm:*)' });
    expect(mine.find((e) => e.type === 'tool.completed')?.data).toMatchObject({ toolName: 'Task', isError: false, content: 'the notes say: the notes' });
    expect(mine.at(-2)?.type).toBe('run.completed');
    expect(existsSync(join(project, 'notes.txt'))).toBe(true);
    expect(existsSync(join(project, 'x.txt'))).toBe(false);
  });
});

describe('sage skills list --json', () => {
  it('lists skills by priority with both spellings, and reports a malformed one by file and field', async () => {
    const skill = (name: string, text: string) => {
      mkdirSync(join(project, '.sage', 'skills', name), { recursive: true });
      writeFileSync(join(project, '.sage', 'skills', name, 'SKILL.md'), text);
    };
    skill('a', '---\nname: low\ndescription: Low\nallowed-tools: Read\n---\n');
    skill('b', '---\nname: high\ndescription: High\nallowed_tools: [Grep]\nuser_invocable: false\npriority: 95\n---\n');
    skill('c', '---\ndescription: [broken\n---\n');
    // A project's skills are read only once its folder is trusted.
    const untrusted = JSON.parse((await runCli(['skills', 'list', '--json'], { cwd: project, env: env() })).stdout) as { skills: unknown[] };
    expect(untrusted.skills).toEqual([]);
    trustFolder(join(dir, 'home'), project);
    const result = await runCli(['skills', 'list', '--json'], { cwd: project, env: env() });
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { skills: Array<{ name: string; allowedTools: string[]; userInvocable: boolean }>; problems: Array<{ file: string; field: string }> };
    expect(out.skills.map((s) => [s.name, s.allowedTools, s.userInvocable])).toEqual([['high', ['Grep'], false], ['low', ['Read'], true]]);
    expect(out.problems).toEqual([expect.objectContaining({ file: join(project, '.sage', 'skills', 'c', 'SKILL.md'), field: '(front matter)' })]);
  });
});

describe('sage agents list --json', () => {
  it('lists agent files before the built-ins, and a malformed file by file and field', async () => {
    mkdirSync(join(project, '.sage', 'agents'), { recursive: true });
    writeFileSync(join(project, '.sage', 'agents', 'reviewer.md'), '---\nname: reviewer\ndescription: Reviews\ntools: Read, Grep\n---\nReview.\n');
    writeFileSync(join(project, '.sage', 'agents', 'broken.md'), '---\nname: broken\n---\n');
    // A project's agent files are read only once its folder is trusted.
    const untrusted = JSON.parse((await runCli(['agents', 'list', '--json'], { cwd: project, env: env() })).stdout) as { agents: Array<{ name: string }> };
    expect(untrusted.agents.map((a) => a.name)).toEqual(['general-purpose', 'Explore', 'Plan']);
    trustFolder(join(dir, 'home'), project);
    const result = await runCli(['agents', 'list', '--json'], { cwd: project, env: env() });
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout) as { agents: Array<{ name: string; tools: unknown }>; problems: Array<{ file: string; field: string }> };
    expect(out.agents.map((a) => [a.name, a.tools])).toEqual([['reviewer', ['Read', 'Grep']], ['general-purpose', 'inherited'], ['Explore', ['Read', 'Glob', 'Grep', 'Bash']], ['Plan', ['Read', 'Glob', 'Grep', 'Bash']]]);
    expect(out.problems).toEqual([expect.objectContaining({ file: join(project, '.sage', 'agents', 'broken.md'), field: 'description' })]);
  });
});

describe('a subagent waiting for an approval when its process is killed', { timeout: 120_000 }, () => {
  it('is answered with sage respond, and sage runs recover finishes the subagent and its parent (one subagent, the approved call run once)', async () => {
    const db = join(dir, 'sage.db');
    const file = script({
      turns: [{ toolCalls: [{ name: 'Task', input: { description: 'write', prompt: 'write out.txt', subagent_type: 'general-purpose' } }] }, { text: 'parent done' }],
      agents: { 'general-purpose': { turns: [{ toolCalls: [{ name: 'Write', input: { file_path: 'out.txt', content: 'approved\n' } }] }, { text: 'wrote out.txt' }] } },
    });
    const session = new TmuxSession(['run', '--model', `scripted:${file}`, '--db', db, 'delegate a write'], { cwd: project, env: env() as Record<string, string> });
    try {
      await session.waitFor('❯ Allow once', 30_000);
      const pids = execFileSync('pgrep', ['-f', file], { encoding: 'utf8' }).trim().split('\n').map(Number);
      for (const p of pids) process.kill(p, 'SIGKILL');
    } finally {
      session.kill();
    }
    const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: project, env: env(), timeoutMs: 60_000 });
    const pending = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as Array<{ id: string; runId: string; request: { agent?: { type: string } } }>;
    expect(pending).toHaveLength(1);
    expect(pending[0]!.runId).toMatch(/\.task\./);
    const answered = await sage(['respond', pending[0]!.id, '--allow', '--json']);
    expect(answered.code).toBe(0);
    const parentId = pending[0]!.runId.split('.task.')[0]!;
    // The dead process's lease (5 s) runs out; then recover takes both runs over.
    const deadline = Date.now() + 60_000;
    let status: string | undefined;
    while (Date.now() < deadline) {
      await sage(['runs', 'recover', '--json']);
      const runs = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Array<{ id: string; status: string }>;
      status = runs.find((r) => r.id === parentId)?.status;
      if (status === 'completed') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(status).toBe('completed');
    const runs = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Array<{ id: string; status: string }>;
    expect(runs.map((r) => r.status).sort()).toEqual(['completed', 'completed']);
    expect(readFileSync(join(project, 'out.txt'), 'utf8')).toBe('approved\n');
    const shown = JSON.parse((await sage(['runs', 'show', parentId, '--json', '--events', '1000'])).stdout) as { events?: Array<{ type: string; data: Record<string, unknown> }> };
    const task = (shown.events ?? []).filter((e) => e.type === 'tool.completed' && e.data.toolName === 'Task' && !e.data.agent);
    expect(task.at(-1)?.data).toMatchObject({ isError: false, content: 'wrote out.txt' });
  });
});
