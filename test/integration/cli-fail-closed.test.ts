import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';
import { TmuxSession } from '../support/tmux-session.js';

// Each test gets its own home (SAGE_HOME) and project folder; the script touches a marker file,
// so whether the denied command ran is read from the disk, not from the output.
function setup(userSettings?: string) {
  const home = mkdtempSync(join(tmpdir(), 'sage-failclosed-home-'));
  const project = mkdtempSync(join(tmpdir(), 'sage-failclosed-project-'));
  mkdirSync(join(home, '.sage'));
  if (userSettings !== undefined) writeFileSync(join(home, '.sage', 'settings.json'), userSettings);
  const marker = join(project, 'marker');
  const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: `touch ${marker}` } }] }, { text: 'done' }]);
  return { home, project, marker, script, env: { SAGE_HOME: home } };
}

const TRAILING_COMMA = '{\n  "permissions": {\n    "deny": ["Bash(touch *)"],\n  }\n}\n';
const noStack = /\n\s+at /;

describe('the CLI fails closed on settings that do not load', { timeout: 60_000 }, () => {
  it('refuses a user settings file with a trailing comma: exit 2, the file and line named, the denied command never runs', async () => {
    const s = setup(TRAILING_COMMA);
    const result = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${join(s.home, '.sage', 'settings.json')}, line 4, column 3, field (root): not valid JSON`);
    expect(result.stderr).toContain('--ignore-broken-settings');
    expect(result.stderr).not.toMatch(noStack);
    expect(result.stdout).toBe('');
    expect(existsSync(s.marker)).toBe(false);
  });

  it('with --ignore-broken-settings runs without the file and says it was skipped (its deny rule is not applied)', async () => {
    const s = setup(TRAILING_COMMA);
    const result = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow', '--ignore-broken-settings'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/settings skipped: .*settings\.json, line 4, column 3, field \(root\): not valid JSON.*none of its rules are applied/);
    expect(existsSync(s.marker)).toBe(true);
  });

  it('refuses --deny with a rule that can never match, even with --ignore-broken-settings', async () => {
    const s = setup();
    for (const extra of [[], ['--ignore-broken-settings']]) {
      const result = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow', '--deny', 'Bash(touch *', ...extra], { cwd: s.project, env: s.env });
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--deny "Bash(touch *": Invalid permission rule');
      expect(result.stderr).not.toMatch(noStack);
      expect(existsSync(s.marker)).toBe(false);
    }
  });

  it('refuses a deny rule with an invisible character in user settings or --deny: exit 2 naming the file or flag, the rule and the code point; nothing runs', async () => {
    const s = setup(JSON.stringify({ permissions: { deny: ['Bash(touch\u200b *)'] } }, null, 2));
    const fromFile = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow'], { cwd: s.project, env: s.env });
    expect(fromFile.code).toBe(2);
    expect(fromFile.stderr).toContain(`${join(s.home, '.sage', 'settings.json')}, line 4, field permissions.deny[0]: Invalid permission rule "Bash(touch\\u{200b} *)": it contains U+200B ZERO WIDTH SPACE`);
    expect(fromFile.stderr).not.toMatch(noStack);
    expect(existsSync(s.marker)).toBe(false);

    const clean = setup();
    const fromFlag = await runCli(['run', 'touch it', '--model', `scripted:${clean.script}`, '--non-interactive', '--auto', 'allow', '--deny', 'Bash(touch\u00a0*)', '--ignore-broken-settings'], { cwd: clean.project, env: clean.env });
    expect(fromFlag.code).toBe(2);
    expect(fromFlag.stderr).toContain('U+00A0 NO-BREAK SPACE');
    expect(fromFlag.stderr).toContain('Bash(touch\\u{a0}*)');
    expect(existsSync(clean.marker)).toBe(false);
  });

  it('refuses a broken deny rule in the project file, naming its line and field', async () => {
    const s = setup();
    mkdirSync(join(s.project, '.sage'));
    writeFileSync(join(s.project, '.sage', 'settings.json'), '{\n  "permissions": {\n    "deny": [\n      "Bash(touch *"\n    ]\n  }\n}\n');
    const result = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${join(s.project, '.sage', 'settings.json')}, line 4, field permissions.deny[0]: Invalid permission rule "Bash(touch *"`);
    expect(existsSync(s.marker)).toBe(false);
  });

  it('prints warnings and goes on (an untrusted folder allow rule, an unknown tool)', async () => {
    const s = setup(JSON.stringify({ permissions: { deny: ['Frobnicate'] } }));
    mkdirSync(join(s.project, '.sage'));
    writeFileSync(join(s.project, '.sage', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(touch *)'] } }));
    const result = await runCli(['run', 'touch it', '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/settings warning: .*permissions\.allow\[0\]: the allow rule Bash\(touch \*\) is not applied until this folder is trusted/);
    expect(result.stderr).toMatch(/settings warning: .*Frobnicate, which Sage does not know/);
    expect(existsSync(s.marker)).toBe(true);
  });

  it('sage run --detach refuses before anything is stored', async () => {
    const s = setup(TRAILING_COMMA);
    const db = join(s.project, 'runs.db');
    const result = await runCli(['run', 'touch it', '--detach', '--db', db, '--model', `scripted:${s.script}`, '--non-interactive', '--auto', 'allow'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not valid JSON');
    expect(result.stdout).toBe('');
    expect(existsSync(db)).toBe(false);
    expect(existsSync(s.marker)).toBe(false);
  });

  it('sage demo refuses too (it reads the user settings)', async () => {
    const s = setup(TRAILING_COMMA);
    const result = await runCli(['demo', '--batch'], { cwd: s.project, env: s.env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('not valid JSON');
    expect(result.stdout).toBe('');
  });

  it('the interactive session refuses before its first prompt', async () => {
    const s = setup(TRAILING_COMMA);
    const session = new TmuxSession(['--model', `scripted:${s.script}`], { cwd: s.project, env: s.env });
    try {
      expect(await session.exitCode()).toBe(2);
      const screen = session.screen();
      expect(screen).toContain('not valid JSON');
      expect(screen).not.toContain('/help for commands');
    } finally {
      session.kill();
    }
  });
});

describe('sage respond rebuilds the gate: broken settings stop it before the answer is stored', { timeout: 240_000 }, () => {
  it('refuses (exit 2, the request stays pending, nothing ran); with --ignore-broken-settings the answer goes through', async () => {
    const s = setup();
    const db = join(s.project, 'sage.db');
    const sage = (args: string[]) => runCli([...args, '--db', db], { cwd: s.project, env: { ...s.env, SAGE_DATABASE_URL: '' }, timeoutMs: 90_000 });
    const started = await sage(['run', 'touch it', '--detach', '--json', '--model', `scripted:${s.script}`]);
    expect(started.code).toBe(0);
    const { runId } = JSON.parse(started.stdout) as { runId: string };
    let ask: { id: string } | undefined;
    for (let i = 0; i < 150 && !ask; i++) {
      const list = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as Array<{ id: string; runId: string }>;
      ask = list.find((x) => x.runId === runId);
      if (!ask) await new Promise((r) => setTimeout(r, 100));
    }
    expect(ask).toBeDefined();
    // The settings break while the run waits (a deny rule with a trailing comma).
    writeFileSync(join(s.home, '.sage', 'settings.json'), TRAILING_COMMA);

    const refused = await sage(['respond', ask!.id, '--allow']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${join(s.home, '.sage', 'settings.json')}, line 4, column 3, field (root): not valid JSON`);
    expect(refused.stderr).not.toMatch(noStack);
    expect(existsSync(s.marker)).toBe(false);
    const still = JSON.parse((await sage(['interactions', 'list', '--pending', '--json'])).stdout) as Array<{ id: string }>;
    expect(still.map((x) => x.id)).toContain(ask!.id);

    const resumed = await sage(['runs', 'resume', runId]);
    expect(resumed.code).toBe(2);
    expect(resumed.stderr).toContain('not valid JSON');

    const answered = await sage(['respond', ask!.id, '--allow', '--ignore-broken-settings', '--json']);
    expect(answered.code).toBe(0);
    expect(answered.stderr).toMatch(/settings skipped: .*none of its rules are applied/);
    expect(JSON.parse(answered.stdout)).toMatchObject({ interactionId: ask!.id, status: 'completed' });
    expect(existsSync(s.marker)).toBe(true);
    rmSync(s.project, { recursive: true, force: true });
  });
});
