import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { DurableRunner } from '../durable/durable-runner.js';
import { trustFolder } from '../permission/trusted-folders.js';
import { createRunFactory } from '../runtime/create-run.js';
import { openSqliteStore } from '../store/open-store.js';
import { discoverSkills } from './discover-skills.js';
import { parseFrontMatter } from './front-matter.js';

let dir: string;
let home: string;
let project: string;

beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-skills-')));
  home = join(dir, 'home');
  project = join(dir, 'project');
  mkdirSync(join(home, '.sage'), { recursive: true });
  mkdirSync(project);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function skill(root: string, name: string, text: string): string {
  mkdirSync(join(root, name), { recursive: true });
  const file = join(root, name, 'SKILL.md');
  writeFileSync(file, text);
  return file;
}

describe('front matter', () => {
  test('reads seed 001\'s fields: lists, numbers, booleans, and the body', () => {
    const { fields, body } = parseFrontMatter('---\nname: x\ndescription: "a: b"\nallowed_tools:\n  - Read\n  - Grep\nuser_invocable: true\npriority: 95\ntags: [a, b]\n---\n\n# Body\n');
    expect(fields).toEqual({ name: 'x', description: 'a: b', allowed_tools: ['Read', 'Grep'], user_invocable: true, priority: 95, tags: ['a', 'b'] });
    expect(body).toBe('# Body\n');
  });
});

describe('discoverSkills', () => {
  test('finds seed 001 and Claude Code spellings, orders by priority, reports a malformed one by file and field and skips it', () => {
    skill(join(project, '.sage', 'skills'), 'seed', '---\nname: sage-agent-execution\ndescription: Execution guide\nwhen_to_use: agent flows\nallowed_tools:\n  - Read\n  - Bash\nuser_invocable: true\npriority: 95\n---\nSteps.\n');
    skill(join(home, '.sage', 'skills'), 'cc', '---\ndescription: Claude Code style\nallowed-tools: Read, Bash(git status:*)\nuser-invocable: false\n---\nDo it.\n');
    const bad = skill(join(home, '.sage', 'skills'), 'bad', '---\nname: bad\npriority: high\ndescription: x\n---\n');
    trustFolder(home, project);
    const { skills, problems } = discoverSkills(project, home);
    expect(skills.map((s) => [s.name, s.priority, s.userInvocable, s.allowedTools, s.scope])).toEqual([
      ['sage-agent-execution', 95, true, ['Read', 'Bash'], 'project'],
      ['cc', 0, false, ['Read', 'Bash(git status:*)'], 'user'],
    ]);
    expect(skills[0]!.whenToUse).toBe('agent flows');
    expect(problems).toEqual([{ file: bad, field: 'priority', message: expect.any(String) }]);
  });

  test('a project\'s .sage/skills and .claude/skills are read only once the folder is trusted', () => {
    skill(join(project, '.claude', 'skills'), 'c', '---\ndescription: from claude\n---\n');
    skill(join(project, '.sage', 'skills'), 's', '---\ndescription: from sage\nallowed_tools: [Bash]\n---\n');
    const before = discoverSkills(project, home);
    expect(before.skills).toEqual([]);
    expect(before.untrusted).toEqual([join(project, '.sage', 'skills'), join(project, '.claude', 'skills')]);
    trustFolder(home, project);
    expect(discoverSkills(project, home).skills.map((s) => [s.name, s.trusted])).toEqual([['c', true], ['s', true]]);
  });
});

describe('an active skill', () => {
  async function runWith(turns: unknown[], rules: Array<{ behavior: 'allow' | 'ask' | 'deny'; rule: string; source: string }> = [], task = 't') {
    trustFolder(home, project);
    skill(join(project, '.sage', 'skills'), 'tidy', '---\nname: tidy\ndescription: Tidies files\nallowed-tools: Bash(touch:*), Bash(rm:*)\n---\nTouch then remove.\n');
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify({ turns }));
    const store = await openSqliteStore(':memory:');
    const factory = createRunFactory({ store, home });
    // batch: an ask becomes a denial, so "ran without asking" is visible in the results.
    const runner = await new DurableRunner({ store, runtime: factory, idleSuspendMs: 0 }).open();
    const spec = await factory.admitRun({ task: task, surface: 'sdk', model: `scripted:${file}`, cwd: project, oneTask: true, mode: 'batch', rules });
    const handle = await runner.start(task, spec);
    const outcome = await handle.outcome;
    await runner.close();
    await store.close();
    return { outcome, system: spec.system! };
  }

  test('lets its allowed tools run without asking, a deny rule still wins, and it ends with the turn', async () => {
    const { outcome, system } = await runWith(
      [
        { toolCalls: [{ name: 'Bash', input: { command: 'touch before.txt' } }] },
        { toolCalls: [{ name: 'Skill', input: { skill: 'tidy' } }] },
        { toolCalls: [{ name: 'Bash', input: { command: 'touch a.txt' } }, { name: 'Bash', input: { command: 'rm a.txt' } }] },
        { text: 'tidied' },
      ],
      [{ behavior: 'deny', rule: 'Bash(rm:*)', source: 'cli' }],
    );
    expect(system).toMatch(/# Skills\n- tidy: Tidies files/);
    const history = outcome.toolHistory.map((h) => [h.name, (h.input as { command?: string }).command ?? '', h.decision.behavior, h.decision.source]);
    expect(history).toEqual([
      ['Bash', 'touch before.txt', 'deny', expect.any(String)],
      ['Skill', '', 'allow', expect.any(String)],
      ['Bash', 'touch a.txt', 'allow', 'rule'],
      ['Bash', 'rm a.txt', 'deny', 'rule'],
    ]);
    expect(outcome.toolHistory[2]!.decision.reason).toMatch(/skill "tidy" is active/);
    expect(outcome.toolHistory[3]!.decision.rule).toBe('Bash(rm:*)');
    expect(outcome.toolHistory[1]!.result.content).toMatch(/Touch then remove/);
  });
});

describe('/name in a session', () => {
  test('sends the skill\'s instructions as the message, which makes the skill active in the run', async () => {
    const { skillCommand, invocableSkills } = await import('../cli/skill-commands.js');
    trustFolder(home, project);
    skill(join(project, '.sage', 'skills'), 'tidy', '---\nname: tidy\ndescription: Tidies files\nallowed-tools: Bash(touch:*)\n---\nTouch files.\n');
    skill(join(project, '.sage', 'skills'), 'hidden', '---\nname: hidden\ndescription: Model only\nuser-invocable: false\n---\n');
    const previous = process.env.SAGE_HOME;
    process.env.SAGE_HOME = home;
    let skills;
    try {
      skills = invocableSkills(project);
    } finally {
      if (previous === undefined) delete process.env.SAGE_HOME;
      else process.env.SAGE_HOME = previous;
    }
    expect(skills.map((k) => k.name)).toEqual(['tidy']);
    expect(skillCommand('/hidden', skills)).toBeUndefined();
    expect(skillCommand('/nope x', skills)).toBeUndefined();
    const message = skillCommand('/tidy the build folder', skills)!;
    expect(message).toMatch(/^<skill name="tidy">\nTouch files\.\n<\/skill>\nArguments: the build folder/);
    const file = join(dir, 'script.json');
    writeFileSync(file, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: 'touch a.txt' } }] }, { text: 'ok' }] }));
    const store = await openSqliteStore(':memory:');
    const factory = createRunFactory({ store, home });
    const runner = await new DurableRunner({ store, runtime: factory, idleSuspendMs: 0 }).open();
    const spec = await factory.admitRun({ task: message, surface: 'sdk', model: `scripted:${file}`, cwd: project, oneTask: true, mode: 'batch' });
    const outcome = await (await runner.start(message, spec)).outcome;
    await runner.close();
    await store.close();
    expect(outcome.toolHistory[0]!.decision).toMatchObject({ behavior: 'allow', reason: expect.stringMatching(/skill "tidy" is active/) });
  });
});

describe('how long a skill stays active', () => {
  test('until the model replies without tool calls (the end of the user turn); an untrusted project skill grants nothing', async () => {
    const { SubagentHost } = await import('../subagents/host.js');
    const host = new SubagentHost({ home, newChild: () => Promise.reject(new Error('unused')) });
    const active = host.activeSkills('run_1');
    const base = { name: 'g', description: 'd', allowedTools: ['Bash'], userInvocable: true, priority: 0, instructions: '', file: 'f', scope: 'project' as const };
    active.activate({ ...base, trusted: false });
    expect(active.names()).toEqual([]);
    active.activate({ ...base, trusted: true });
    expect(active.names()).toEqual(['g']);
    const listen = host.listener('run_1');
    const event = (toolCalls: unknown[]) => ({ seq: 1, runId: 'run_1', at: '', type: 'message.completed', data: { role: 'assistant', text: '', toolCalls } }) as never;
    listen(event([{ id: 'c', name: 'Bash', input: {} }]));
    expect(active.names()).toEqual(['g']);
    listen(event([]));
    expect(active.names()).toEqual([]);
  });
});
