import { spawnSync } from 'node:child_process';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { runningAsRoot, useTempDirs } from './test-support/temp-dir.js';

const tempDir = useTempDirs();
const here = path.dirname(fileURLToPath(import.meta.url));
const moduleUrl = (name: string): string => pathToFileURL(path.join(here, name)).href;

/** The account the tools run as when this test is run by root, so file modes apply again. */
const NOBODY = 65_534;

describe('OS permission errors (EACCES)', () => {
  // Root bypasses file modes, so as root the tools run in a child process as `nobody` instead;
  // the chmod-based tests beside each tool cover non-root runs.
  it.runIf(runningAsRoot)('reach the model as error results from Read, Write, Glob and Grep', async () => {
    const cwd = await tempDir();
    await chmod(cwd, 0o755);
    await writeFile(path.join(cwd, 'secret.txt'), 'x');
    await chmod(path.join(cwd, 'secret.txt'), 0o000);
    await mkdir(path.join(cwd, 'locked'));
    await chmod(path.join(cwd, 'locked'), 0o000);
    await mkdir(path.join(cwd, 'readonly'));
    await chmod(path.join(cwd, 'readonly'), 0o555);
    const script = path.join(cwd, 'run.mts');
    await writeFile(
      script,
      `
      const { readTool } = await import(${JSON.stringify(moduleUrl('read.ts'))});
      const { writeTool } = await import(${JSON.stringify(moduleUrl('write.ts'))});
      const { globTool } = await import(${JSON.stringify(moduleUrl('glob.ts'))});
      const { createGrepTool } = await import(${JSON.stringify(moduleUrl('grep.ts'))});
      const { createTestContext } = await import(${JSON.stringify(moduleUrl('test-support/context.ts'))});
      const ctx = createTestContext({ cwd: ${JSON.stringify(cwd)} });
      const results = {
        read: await readTool.execute({ file_path: 'secret.txt' }, ctx),
        write: await writeTool.execute({ file_path: 'readonly/new.txt', content: 'x' }, ctx),
        glob: await globTool.execute({ pattern: '*', path: 'locked' }, ctx),
        grepJs: await createGrepTool({ rgPath: null }).execute({ pattern: 'x', path: 'locked' }, ctx),
      };
      process.stdout.write(JSON.stringify(results));
      `,
    );
    const tsx = createRequire(import.meta.url).resolve('tsx');
    const child = spawnSync(process.execPath, ['--import', tsx, script], {
      uid: NOBODY,
      gid: NOBODY,
      cwd,
      encoding: 'utf8',
      env: { ...process.env, HOME: cwd },
      timeout: 15_000,
    });
    expect(child.stderr).toBe('');
    const results = JSON.parse(child.stdout) as Record<string, { content: string; isError?: boolean }>;
    for (const [tool, result] of Object.entries(results)) {
      expect({ tool, ...result }).toEqual({ tool, content: expect.stringContaining('permission denied'), isError: true });
    }
  });
});
