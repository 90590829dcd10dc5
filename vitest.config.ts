import { configDefaults, defineConfig } from 'vitest/config';
import { slowTestFiles } from './test/lanes.js';

// Two lanes (see README, "Tests"): `unit`, what runs with nothing but Node (`npm run test:unit`), and
// `slow`, the tests that need Postgres, a browser or tmux. Which is which is worked out from what
// each test file reaches (test/lanes.ts), never from a list kept by hand. `npm test` runs both.
const include = ['src/**/*.test.ts', 'test/**/*.test.ts'];
const slow = slowTestFiles(import.meta.dirname);

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'unit', include, exclude: [...configDefaults.exclude, ...slow] } },
      { extends: true, test: { name: 'slow', include: slow } },
    ],
  },
});
