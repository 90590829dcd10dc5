import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';

/**
 * A fresh temporary directory per call, removed after each test. Call it inside a test (or a
 * beforeEach) of a file that imports vitest.
 */
export function useTempDirs(): () => Promise<string> {
  const created: string[] = [];
  afterEach(async () => {
    await Promise.all(created.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'sage-tool-'));
    created.push(dir);
    return dir;
  };
}

/** Root ignores file permission bits, so chmod-based tests of EACCES only work for other users. */
export const runningAsRoot = typeof process.getuid === 'function' && process.getuid() === 0;
