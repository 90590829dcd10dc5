import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bin, freshWorkDir, runCli } from '../support/cli.js';

// `sage serve` checks its model as `sage run` does, before it serves: a model it cannot use is a
// usage error (exit 2) naming the problem, not a server whose every run fails.
const noStack = /\n\s+at /;

describe('sage serve checks its model at start', () => {
  const env = { SAGE_DATABASE_URL: '', SAGE_MODEL: '' };

  it('refuses a scripted model file that does not exist, naming it', async () => {
    const cwd = freshWorkDir();
    const result = await runCli(['serve', '--port', '0', '--model', 'scripted:missing.json'], { cwd, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(join(cwd, 'missing.json'));
    expect(result.stderr).not.toMatch(noStack);
  });

  it('refuses a scripted model file that is not a script', async () => {
    const cwd = freshWorkDir();
    writeFileSync(join(cwd, 'bad.json'), '{"turns": 3}');
    const result = await runCli(['serve', '--port', '0', '--model', 'scripted:bad.json'], { cwd, env });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('bad.json');
  });

  it('refuses a provider model without its key, naming the variable', async () => {
    const result = await runCli(['serve', '--port', '0', '--model', 'anthropic:claude-sonnet-4-5'], { env: { ...env, ANTHROPIC_API_KEY: '' } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ANTHROPIC_API_KEY');
    expect(result.stderr).not.toMatch(noStack);
  });

  it('refuses a spec that is not one, and SAGE_MODEL as --model', async () => {
    const bad = await runCli(['serve', '--port', '0', '--model', 'gpt-4o'], { env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/gpt-4o/);
    const fromEnv = await runCli(['serve', '--port', '0'], { env: { ...env, SAGE_MODEL: 'openai:gpt-4o', OPENAI_API_KEY: '' } });
    expect(fromEnv.code).toBe(2);
    expect(fromEnv.stderr).toContain('OPENAI_API_KEY');
  });
});

describe('sage serve --model scripted:<relative path>', () => {
  let child: ChildProcess | undefined;
  afterEach(() => child?.kill('SIGKILL'));

  it('reads the file relative to the current folder, not the --scripted-dir, and runs that name no model use it', async () => {
    const cwd = freshWorkDir();
    mkdirSync(join(cwd, 'scripts'));
    mkdirSync(join(cwd, 'client-scripts'));
    writeFileSync(join(cwd, 'scripts', 'x.json'), JSON.stringify({ turns: [{ text: 'from the operator script' }] }));
    child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--model', 'scripted:scripts/x.json', '--scripted-dir', 'client-scripts', '--log-format', 'json'], {
      cwd,
      env: { ...process.env, SAGE_DATABASE_URL: '', SAGE_MODEL: '', SAGE_HOME: cwd, SAGE_MANAGED_SETTINGS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stderr!.on('data', (d) => (out += d));
    const url = await new Promise<string>((resolve, reject) => {
      child!.stdout!.on('data', (d) => {
        out += d;
        const found = /Sage is serving (\S+)/.exec(out)?.[1];
        if (found) resolve(found);
      });
      child!.once('exit', () => reject(new Error(`sage serve exited:\n${out}`)));
    });
    const models = (await (await fetch(`${url}/models`)).json()) as { defaultModel: string };
    expect(models.defaultModel).toBe(`scripted:${join(cwd, 'scripts', 'x.json')}`);
    const created = await fetch(`${url}/runs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ task: 'hello' }) });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    // A web run answers and waits for the next message (idle); one whose model failed ends failed.
    let run: { status: string; model: string; error: unknown } = { status: 'running', model: '', error: null };
    while (run.status !== 'idle' && run.status !== 'failed') {
      run = (await (await fetch(`${url}/runs/${id}`)).json()) as typeof run;
      if (run.status !== 'idle' && run.status !== 'failed') await new Promise((r) => setTimeout(r, 50));
    }
    expect(run).toMatchObject({ status: 'idle', error: null, model: `scripted:${join(cwd, 'scripts', 'x.json')}` });
  });
});
