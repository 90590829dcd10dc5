import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time even on 2 cores (vitest's default is cores - 1 = one): most files
    // wait on child processes, sockets and the browser, not the CPU.
    maxWorkers: 2,
  },
});
