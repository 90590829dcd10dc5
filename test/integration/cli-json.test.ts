import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEventSchema } from '../../src/events/index.js';
import { runCli, writeScript } from '../support/cli.js';

// Inline code is opaque to the permission engine, so this command is always asked.
const needsApproval = [{ text: 'Writing.', toolCalls: [{ name: 'Bash', input: { command: 'node -e "console.log(\'hello-from-bash\')"' } }] }, { text: 'All done.' }];

describe('sage run --json', () => {
  it('prints only RunEvents, one JSON object per line, valid against the event schema', async () => {
    const script = writeScript(needsApproval);
    const result = await runCli(['run', 'say hello', '--model', `scripted:${script}`, '--json', '--non-interactive', '--auto', 'allow']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trim().split('\n');
    const events = lines.map((line) => runEventSchema.parse(JSON.parse(line)));
    expect(events[0]!.seq).toBe(1);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type);
    expect(types).toContain('run.started');
    expect(types).toContain('interaction.answered');
    expect(types.at(-2)).toBe('run.completed');
    const completed = events.find((e) => e.type === 'tool.completed');
    expect(completed?.data).toMatchObject({ toolName: 'Bash', isError: false });
    expect((completed?.data as { content: string }).content).toContain('hello-from-bash');
  });

  it('--auto deny refuses the approval and the run still completes', async () => {
    const script = writeScript(needsApproval);
    const result = await runCli(['run', 'x', '--model', `scripted:${script}`, '--json', '--non-interactive', '--auto', 'deny']);
    expect(result.code).toBe(0);
    const done = result.stdout.trim().split('\n').map((l) => JSON.parse(l)).find((e) => e.type === 'tool.completed');
    expect(done.data.content).toContain('The user denied Bash');
  });

  it('--batch turns the ask into a denial that says batch mode', async () => {
    const script = writeScript(needsApproval);
    const result = await runCli(['run', 'x', '--model', `scripted:${script}`, '--json', '--batch']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('batch mode');
  });
});

describe('model choice', () => {
  it('takes the model from the user settings file when --model is not given', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sage-home-'));
    mkdirSync(join(home, '.sage'));
    const script = writeScript([{ text: 'from the settings model' }]);
    writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ model: `scripted:${script}` }));
    const result = await runCli(['run', 'x', '--json', '--batch'], { env: { SAGE_HOME: home } });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('from the settings model');
  });
});

describe('exit codes and errors', () => {
  it('fails at once, naming the flags, when a person is needed and stdin is not a terminal', async () => {
    const script = writeScript(needsApproval);
    // A run that waited for a person would be killed by runCli's timeout (code null): exit 1 with the
    // message means it failed on its own, without a time assert that a loaded machine would break.
    const result = await runCli(['run', 'x', '--model', `scripted:${script}`], { timeoutMs: 60_000 });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('stdin is not a terminal');
    expect(result.stderr).toContain('--non-interactive');
    expect(result.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('exits 2 with one clear line for bad flags and bad files', async () => {
    const script = writeScript(needsApproval);
    const cases: Array<[string[], RegExp]> = [
      [['run', 'x', '--model', `scripted:${script}`, '--max-steps', 'abc'], /--max-steps must be a whole number/],
      [['run', 'x', '--model', `scripted:${script}`, '--auto', 'allow'], /--auto needs --non-interactive/],
      [['run', 'x', '--model', `scripted:${script}`, '--batch', '--non-interactive'], /exclude each other/],
      [['run', 'x', '--model', 'scripted:/nonexistent/script.json'], /Cannot read the script .*ENOENT/],
      [['run', 'x', '--model', 'gpt:4'], /unknown provider "gpt"/],
      [['run', 'x'], /No model chosen: set ANTHROPIC_API_KEY or OPENAI_API_KEY.*sage demo/],
      [['run', 'x', '--no-such-flag'], /unknown option/],
      [['run', 'x', '--model', `scripted:${script}`, '--permission-mode', 'yolo'], /--permission-mode must be one of/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(args);
      expect(result.code, `${args.join(' ')}\n${result.stderr}`).toBe(2);
      expect(result.stderr).toMatch(message);
      expect(result.stderr).not.toMatch(/\n\s+at /);
      expect(result.stdout).toBe('');
    }
  });

  it('exits 1 when the run fails, and shows the stack only with --verbose', async () => {
    const script = writeScript([{ toolCalls: [{ name: 'Glob', input: { pattern: '*.md' } }] }]);
    const result = await runCli(['run', 'x', '--model', `scripted:${script}`, '--batch']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('The script has 1 turn(s)');
  });

  it('exits 130 when the run is cancelled by SIGINT', async () => {
    const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'sleep 20' } }] }, { text: 'never' }]);
    let pid = 0;
    let sent = false;
    const pending = runCli(['run', 'x', '--model', `scripted:${script}`, '--json', '--non-interactive', '--auto', 'allow'], {
      onSpawn: (p) => (pid = p),
      onStdout: (text) => {
        if (!sent && text.includes('"tool.started"')) {
          sent = true;
          process.kill(pid, 'SIGINT');
        }
      },
    });
    const result = await pending;
    expect(result.code).toBe(130);
    expect(result.stdout).toContain('"run.cancelled"');
  });

  it('prints the version and help and exits 0', async () => {
    const version = await runCli(['--version']);
    expect(version.code).toBe(0);
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    const help = await runCli(['run', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--non-interactive');
  });

  it('prints the version for -v and -V as for --version, alone or before other flags', async () => {
    const expected = (await runCli(['--version'])).stdout;
    for (const args of [['-v'], ['-V'], ['-v', '--verbose']]) {
      const result = await runCli(args);
      expect(result, args.join(' ')).toMatchObject({ code: 0, stdout: expected, stderr: '' });
    }
    expect((await runCli(['--help'])).stdout).toMatch(/-V, --version .*also -v/);
  });
});
