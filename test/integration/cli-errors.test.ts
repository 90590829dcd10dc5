import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bin, runCli, writeScript } from '../support/cli.js';

const noStack = /^\s+at /m;
const isRoot = process.getuid?.() === 0;

function scratch(): string {
  return mkdtempSync(join(tmpdir(), 'sage-cli-errors-'));
}

/** Runs the CLI with stdout piped to a reader that goes away after the first line (`| head -1`). */
function runClosingAfterFirstLine(args: string[], cwd: string): Promise<{ code: number | null; first: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [bin, ...args], { cwd, env: { ...process.env, ANTHROPIC_API_KEY: '', OPENAI_API_KEY: '', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let first = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      if (first.includes('\n')) return;
      first += String(chunk);
      if (first.includes('\n')) child.stdout.destroy();
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, first: first.split('\n')[0]!, stderr });
    });
  });
}

describe('--trajectory is checked before the run starts', { timeout: 60_000 }, () => {
  const script = () => writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'touch ran' } }] }, { text: 'done' }]);

  it('a folder: one line, exit 2, nothing run and no "Done"', async () => {
    const cwd = scratch();
    const result = await runCli(['run', 'x', '--model', `scripted:${script()}`, '--non-interactive', '--auto', 'allow', '--trajectory', cwd], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toEqual([`error: --trajectory ${cwd} is a folder; give a file path, e.g. ${cwd}/run.jsonl.`]);
    expect(result.stdout).toBe('');
    expect(existsSync(join(cwd, 'ran'))).toBe(false);
  });

  it('a path through a file: one line, exit 2', async () => {
    const cwd = scratch();
    writeFileSync(join(cwd, 'plain'), 'x');
    const result = await runCli(['run', 'x', '--model', `scripted:${script()}`, '--batch', '--trajectory', join(cwd, 'plain', 't.jsonl')], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr.trim().split('\n')).toHaveLength(1);
    expect(result.stderr).toContain('is a file, not a folder');
    expect(result.stdout).toBe('');
  });

  // Root writes through file permissions, so only an ordinary user can see this refusal.
  it.skipIf(isRoot)('an unwritable file: one line, exit 2', async () => {
    const cwd = scratch();
    const file = join(cwd, 'readonly.jsonl');
    writeFileSync(file, '');
    chmodSync(file, 0o444);
    const result = await runCli(['run', 'x', '--model', `scripted:${script()}`, '--batch', '--trajectory', file], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('cannot be written (permission denied)');
    expect(result.stdout).toBe('');
  });

  it('a good path still gets every event', async () => {
    const cwd = scratch();
    const file = join(cwd, 'logs', 'run.jsonl');
    const result = await runCli(['run', 'x', '--model', `scripted:${script()}`, '--json', '--batch', '--trajectory', file], { cwd });
    expect(result.code).toBe(0);
    expect(readFileSync(file, 'utf8')).toBe(result.stdout);
  });
});

describe('a reader that goes away (| head -1)', { timeout: 60_000 }, () => {
  it('sage run --json ends quietly with no stack', async () => {
    const cwd = scratch();
    // Several turns, so events are still written after the reader has gone.
    const turns = Array.from({ length: 6 }, (_, i) => ({ toolCalls: [{ name: 'Bash', input: { command: `echo step-${i}` } }] }));
    const script = writeScript([...turns, { text: 'done' }]);
    const result = await runClosingAfterFirstLine(['run', 'x', '--model', `scripted:${script}`, '--json', '--non-interactive', '--auto', 'allow'], cwd);
    expect(JSON.parse(result.first)).toMatchObject({ seq: 1 });
    expect(result.code).toBe(0);
    expect(result.stderr).not.toMatch(noStack);
    expect(result.stderr).not.toContain('EPIPE');
  });
});

describe('command-line mistakes', { timeout: 60_000 }, () => {
  it('sage frobnicate names the unknown command and lists the commands; a typo gets a suggestion', async () => {
    const unknown = await runCli(['frobnicate'], { cwd: scratch() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command "frobnicate"');
    expect(unknown.stderr).toContain('Commands: run, demo, permissions, trust, runs, respond, interactions, skills, agents, mcp, serve');
    expect(unknown.stderr).not.toContain('too many arguments');
    const typo = await runCli(['rnus', 'list'], { cwd: scratch() });
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('Did you mean "runs"?');
  });

  it('sage respond --allow --message is refused (a message goes with --deny), before the store is opened', async () => {
    const cwd = scratch();
    const result = await runCli(['respond', 'some-id', '--allow', '--message', 'go ahead', '--db', join(cwd, 'sage.db')], { cwd });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--message goes with --deny');
    expect(existsSync(join(cwd, 'sage.db'))).toBe(false);
  });

  it('--db that cannot be written says so and exits 2', async () => {
    const cwd = scratch();
    writeFileSync(join(cwd, 'plain'), 'x');
    const script = writeScript([{ text: 'done' }]);
    for (const args of [
      ['runs', 'list', '--db', cwd],
      ['runs', 'list', '--db', join(cwd, 'plain', 'sage.db')],
      ['run', 'x', '--detach', '--batch', '--model', `scripted:${script}`, '--db', cwd],
      ['interactions', 'list', '--db', cwd],
    ]) {
      const result = await runCli(args, { cwd });
      expect(result.code, args.join(' ')).toBe(2);
      expect(result.stderr).toMatch(/^error: --db .*(is a folder|is a file, not a folder)/);
      expect(result.stderr).not.toMatch(noStack);
    }
  });
});

describe('sweep: a bad flag value in every command is a usage error without a stack', () => {
  it('exits 2 with no "    at " lines on stderr', { timeout: 300_000 }, async () => {
    const cwd = scratch();
    writeFileSync(join(cwd, 'plain'), 'x');
    const script = writeScript([{ text: 'done' }]);
    const model = ['--model', `scripted:${script}`];
    const invocations: string[][] = [
      ['frobnicate'],
      ['--permission-mode', 'yolo'],
      ['--max-steps', 'many'],
      ['run', 'x', ...model, '--max-steps', '0'],
      ['run', 'x', ...model, '--interaction-timeout', 'soon'],
      ['run', 'x', ...model, '--base-url', 'not a url'],
      ['run', 'x', ...model, '--auto', 'maybe', '--non-interactive'],
      ['run', 'x', ...model, '--cwd', join(cwd, 'missing')],
      ['run', 'x', ...model, '--trajectory', cwd],
      ['run', 'x', ...model, '--deny', 'Bash(echo *'],
      ['run', 'x', ...model, '--allow', 'Read('],
      ['run', 'x', '--model', 'nosuchprovider:x'],
      ['run', 'x', ...model, '--detach', '--db', cwd],
      ['run', '', ...model],
      ['demo', '--max-steps', 'abc'],
      ['demo', '--trajectory', cwd],
      ['demo', '--deny', 'Bash(echo *'],
      ['runs', 'list', '--limit', 'x'],
      ['runs', 'list', '--status', 'bogus'],
      ['runs', 'show', 'id', '--events', 'abc'],
      ['runs', 'prune', '--older-than', '1w'],
      ['runs', 'resume', 'id', '--db', join(cwd, 'plain', 'x.db')],
      ['runs', 'cancel', 'id', '--db', cwd],
      ['runs', 'recover', '--db', cwd],
      ['respond', 'id'],
      ['respond', 'id', '--allow', '--message', 'x'],
      ['respond', 'id', '--text', 't', '--deny'],
      ['interactions', 'list', '--db', cwd],
      ['permissions', 'check', '--tool', 'Bash', '--input', 'not json'],
      ['permissions', 'check', '--tool', 'Bash', '--input', '{}', '--permission-mode', 'yolo'],
      ['permissions', 'allow', 'Bash(echo *'],
      ['permissions', 'deny', 'Bash', '--scope', 'bogus'],
      ['serve', '--port', 'abc'],
      ['serve', '--log-level', 'loud'],
      ['serve', '--port', '0', '--db', cwd],
    ];
    const failures: string[] = [];
    for (const args of invocations) {
      const result = await runCli(args, { cwd, timeoutMs: 40_000 });
      if (result.code !== 2 || noStack.test(result.stderr) || result.stderr.trim() === '') failures.push(`sage ${args.join(' ')} → exit ${result.code}\n${result.stderr}`);
    }
    expect(failures).toEqual([]);
  });
});
