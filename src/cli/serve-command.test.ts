import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterAll, describe, expect, test, vi } from 'vitest';
import { registerServeCommand } from './serve-command.js';

const sageHome = mkdtempSync(join(tmpdir(), 'sage-serve-flags-'));
vi.stubEnv('SAGE_HOME', sageHome);
vi.stubEnv('SAGE_MANAGED_SETTINGS', '');
afterAll(() => {
  vi.unstubAllEnvs();
  rmSync(sageHome, { recursive: true, force: true });
});

/** Runs `sage serve …` in process; a refused policy throws before any store is opened or port bound. */
async function serve(args: string[]): Promise<unknown> {
  const program = new Command().exitOverride();
  registerServeCommand(program);
  try {
    await program.parseAsync(['node', 'sage', 'serve', '--db', join(sageHome, 'never.db'), ...args]);
  } catch (error) {
    return error;
  }
  throw new Error('expected sage serve to refuse its flags');
}

describe('sage serve policy flags', () => {
  test('an unknown permission mode is refused with the valid ones named', async () => {
    const error = await serve(['--permission-modes', 'default,yolo']);
    // invalid_input: the CLI reports it as a usage error (exit 2).
    expect(error).toMatchObject({ code: 'invalid_input', field: '--permission-modes' });
    expect((error as Error).message).toContain('a permission mode is one of default, acceptEdits, plan, bypassPermissions, dontAsk');
    expect(existsSync(join(sageHome, 'never.db'))).toBe(false);
  });

  test('a malformed --deny rule is refused instead of skipped', async () => {
    const error = await serve(['--deny', 'Bash(rm -rf *']);
    expect(error).toMatchObject({ code: 'invalid_input', field: '--deny' });
    expect((error as Error).message).toMatch(/^Invalid --deny: /);
    expect(existsSync(join(sageHome, 'never.db'))).toBe(false);
  });

  test('--max-waiting-in-memory takes a whole number of 0 or more, and says so', async () => {
    for (const value of ['-1', '2.5', '1e3', 'many', '']) {
      const error = await serve(['--max-waiting-in-memory', value]);
      expect(error).toMatchObject({ code: 'commander.invalidArgument' });
      expect((error as Error).message).toContain('a count of runs is a whole number of 0 or more');
    }
    expect(existsSync(join(sageHome, 'never.db'))).toBe(false);
  });

  test('--young-generation takes a whole number of MB from 0 to 64, and says so', async () => {
    for (const value of ['-1', '65', '2.5', '8e0', 'big', '']) {
      const error = await serve(['--young-generation', value]);
      expect(error).toMatchObject({ code: 'commander.invalidArgument' });
      expect((error as Error).message).toContain('the young generation is a whole number of MB from 0 (V8 decides) to 64');
    }
    expect(existsSync(join(sageHome, 'never.db'))).toBe(false);
  });

  test('--heap-growth takes a whole percent from 0 to 300, and says so', async () => {
    for (const value of ['-1', '301', '2.5', '1e2', 'lots', '']) {
      const error = await serve(['--heap-growth', value]);
      expect(error).toMatchObject({ code: 'commander.invalidArgument' });
      expect((error as Error).message).toContain('heap growth is a whole percent from 0 (V8 decides) to 300');
    }
    expect(existsSync(join(sageHome, 'never.db'))).toBe(false);
  });
});
