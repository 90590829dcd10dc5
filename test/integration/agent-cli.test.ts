// `sage run --agent claude-code`: the real Claude Code CLI (pinned devDependency) driven by the built
// `sage` (dist/cli/bin.js; npm run build first), offline against a loopback fake of the Messages API.
// A run killed with SIGKILL while the agent works is marked interrupted with the agent's session id
// by `sage runs recover`, and `sage run --continue RUN` picks that session up.
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { claudeBinary } from '../../src/agents/claude-code/test-support/claude-binary.js';
import { startFakeAnthropic, type FakeProviderServer, type FakeReply } from '../../src/testing/fake-providers/index.js';
import { runCli } from '../support/cli.js';
import { lastUserBlocks } from '../../src/agents/claude-code/test-support/messages.js';

let dir: string;
let project: string;
let db: string;
let fake: FakeProviderServer;
const claude = claudeBinary();
const plans = new Map<string, { name: string; input: Record<string, unknown> }>();


beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-agent-cli-')));
  project = join(dir, 'project');
  mkdirSync(project);
  mkdirSync(join(dir, '.claude'));
  db = join(dir, 'sage.db');
  writeFileSync(join(dir, 'settings-home-marker'), '');
  fake = await startFakeAnthropic({
    whenEmpty: (request): FakeReply => {
      const blocks = lastUserBlocks(request);
      if (blocks.some((b) => b.type === 'tool_result')) return { text: 'FAKE_DONE' };
      for (const block of blocks) {
        const marker = typeof block.text === 'string' ? /PLAN:(\w+)/.exec(block.text) : null;
        const plan = marker ? plans.get(marker[1]!) : undefined;
        if (plan) return { toolCalls: [{ id: `toolu_${marker![1]}`, name: plan.name, input: plan.input }] };
      }
      return { text: 'ok' };
    },
  });
});

afterAll(async () => {
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** What the child gets: Sage's own home, and Claude Code's variables (passed through by prefix) pointing offline. */
const env = () => ({
  SAGE_HOME: dir,
  SAGE_DATABASE_URL: '',
  HOME: dir,
  CLAUDE_CONFIG_DIR: join(dir, '.claude'),
  ANTHROPIC_BASE_URL: fake.url.replace(/\/v1$/, ''),
  ANTHROPIC_API_KEY: 'sk-ant-fake-key-for-offline-tests',
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
  // Not the agent's: must not reach it (the curated environment).
  SAGE_TEST_SECRET: 'must-not-leak',
});
const sage = (args: string[], options: Parameters<typeof runCli>[1] = {}) => runCli([...args, '--db', db], { cwd: project, env: env(), timeoutMs: 90_000, ...options });

async function until<T>(what: string, probe: () => T | undefined | Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('sage run --agent claude-code', { timeout: 120_000 }, () => {
  it('runs the task through Claude Code with its calls through Sage\'s gate, and the run is in the store like any other', async () => {
    plans.set('cli', { name: 'Bash', input: { command: 'touch from-cli.txt; env > agent-env.txt' } });
    const result = await sage(['run', '--agent', 'claude-code', '--agent-command', claude, '--non-interactive', '--auto', 'allow', '--json', 'PLAN:cli make a file']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const events = result.stdout.trim().split('\n').map((l) => JSON.parse(l) as { type: string; runId: string; data: Record<string, unknown> });
    expect(events[0]).toMatchObject({ type: 'run.started', data: { model: 'agent:claude-code' } });
    expect(events.some((e) => e.type === 'agent.session')).toBe(true);
    expect(events).toContainEqual(expect.objectContaining({ type: 'permission.decided', data: expect.objectContaining({ toolName: 'Bash', behavior: 'allow' }) }));
    expect(events.at(-2)).toMatchObject({ type: 'run.completed', data: { status: 'completed', finalText: 'FAKE_DONE' } });
    expect(existsSync(join(project, 'from-cli.txt'))).toBe(true);
    // The agent's environment was curated: its own variables, not the rest of ours.
    const { readFileSync } = await import('node:fs');
    const agentEnv = readFileSync(join(project, 'agent-env.txt'), 'utf8');
    expect(agentEnv).toContain('ANTHROPIC_BASE_URL=');
    expect(agentEnv).not.toContain('must-not-leak');
    const listed = JSON.parse((await sage(['runs', 'list', '--json'])).stdout) as Array<{ id: string; status: string }>;
    expect(listed).toContainEqual(expect.objectContaining({ id: events[0]!.runId, status: 'completed' }));
  });

  it('killed with SIGKILL while the agent works: recover marks it interrupted with the agent\'s session id, and --continue picks the session up', async () => {
    plans.set('slow', { name: 'Bash', input: { command: 'touch slow-started.txt; sleep 30' } });
    let pid: number | undefined;
    const run = sage(['run', '--agent', 'claude-code', '--agent-command', claude, '--non-interactive', '--auto', 'allow', '--json', 'PLAN:slow a long job'], { onSpawn: (p) => (pid = p) });
    await until('the agent to start the command', () => (existsSync(join(project, 'slow-started.txt')) ? true : undefined));
    process.kill(pid!, 'SIGKILL');
    const killed = await run;
    const runId = (JSON.parse(killed.stdout.split('\n')[0]!) as { runId: string }).runId;
    const session = killed.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l) as { type: string; data: { sessionId?: string } }).find((e) => e.type === 'agent.session')?.data.sessionId;
    expect(session).toBeDefined();

    // The dead process's lease runs out within seconds; then recover takes the run over.
    const recovered = await until('the run to be recovered', async () => {
      const result = await sage(['runs', 'recover', '--json']);
      const runs = (JSON.parse(result.stdout) as { runs: Array<{ runId: string; status: string }> }).runs;
      return runs.some((r) => r.runId === runId) ? runs : undefined;
    });
    expect(recovered).toContainEqual(expect.objectContaining({ runId, status: 'failed' }));
    const shown = JSON.parse((await sage(['runs', 'show', runId, '--json'])).stdout) as { error?: { code: string; message: string } };
    expect(shown.error).toMatchObject({ code: 'agent_interrupted' });
    expect(shown.error?.message).toContain(session!);
    expect(shown.error?.message).toContain(`--continue ${runId}`);

    plans.set('after', { name: 'Bash', input: { command: 'touch after.txt' } });
    const before = fake.requests.length;
    const followUp = await sage(['run', '--continue', runId, '--non-interactive', '--auto', 'allow', '--json', 'PLAN:after go on']);
    expect(followUp.code).toBe(0);
    expect(existsSync(join(project, 'after.txt'))).toBe(true);
    const history = JSON.stringify((fake.requests[before]!.body as { messages: unknown[] }).messages);
    expect(history).toContain('PLAN:slow');
    expect(history).toContain('PLAN:after');
  });

  it('refuses bad agent flags with one clear line', async () => {
    const unknown = await sage(['run', '--agent', 'nope', 'x']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('There is no agent called "nope"');
    const acp = await sage(['run', '--agent', 'acp', 'x']);
    expect(acp.code).toBe(2);
    expect(acp.stderr).toMatch(/--agent-command|cannot drive acp/);
    const env = await sage(['run', '--agent', 'claude-code', '--agent-env', '1BAD=x', 'x']);
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('"1BAD" is not a variable name');
    const follow = await sage(['run', '--continue', 'run_missing', 'x']);
    expect(follow.code).toBe(2);
    expect(follow.stderr).toContain('there is no such run');
  });
});
