import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { resourcesOf, slowTestFiles, testFiles } from './lanes.js';

const repo = resolve(import.meta.dirname, '..');

describe('the test lanes', () => {
  it('put the tests that need Postgres, a browser or tmux in the slow lane, named by what they need', () => {
    expect(resourcesOf(repo, 'src/store/postgres-store.test.ts')).toEqual(['Postgres']);
    expect(resourcesOf(repo, 'src/durable/crash-recovery-postgres.test.ts')).toEqual(['Postgres']);
    expect(resourcesOf(repo, 'test/browser/web-ui.test.ts')).toEqual(['a browser']);
    expect(resourcesOf(repo, 'test/integration/cli-terminal.test.ts')).toEqual(['tmux']);
    const slow = slowTestFiles(repo);
    for (const file of testFiles(repo).filter((f) => f.startsWith('test/browser/'))) expect(slow).toContain(file);
  });

  it('keep in the fast lane the tests that only share a module with a slow one', () => {
    // The SQLite store contract, and the CLI driven without a terminal.
    expect(resourcesOf(repo, 'src/store/sqlite-store.test.ts')).toEqual([]);
    expect(resourcesOf(repo, 'test/integration/cli-json.test.ts')).toEqual([]);
    expect(resourcesOf(repo, 'test/lanes.test.ts')).toEqual([]);
  });

  describe('for a test nobody has classified', () => {
    const root = mkdtempSync(join(tmpdir(), 'sage-lanes-'));
    afterAll(() => rmSync(root, { recursive: true, force: true }));
    // The markers are spelled in parts so that this file does not name a resource itself.
    const pg = `'${'p'}g'`;
    const tmux = `'${'t'}mux'`;
    const file = (path: string, text: string) => {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    file('src/store/sql/driver.ts', `import pg from ${pg};\nexport const open = () => new pg.Client();\n`);
    file('src/store/test-support/db.ts', `import pg from ${pg};\nexport const url = 'postgres://x';\n`);
    file('src/store/test-support/via.ts', "export { url } from './db.js';\n");
    file('src/store/test-support/types-only.ts', "import type { url } from './db.js';\nexport type U = typeof url;\n");
    file('src/store/uses-support.test.ts', "import { url } from './test-support/via.js';\n");
    file('src/store/uses-driver.test.ts', "import { open } from './sql/driver.js';\n");
    file('src/store/uses-type.test.ts', "import type { U } from './test-support/types-only.js';\n");
    file('src/store/hard-coded.test.ts', `const url = 'postgres://postgres@127.0.0.1:${'54'}32/test';\n`);
    file('test/e2e/term.test.ts', `import { execFileSync } from 'node:child_process';\nexecFileSync(${tmux}, ['ls']);\n`);

    it('finds a resource reached through test support, however deep', () => {
      expect(resourcesOf(root, 'src/store/uses-support.test.ts')).toEqual(['Postgres']);
      expect(resourcesOf(root, 'src/store/hard-coded.test.ts')).toEqual(['Postgres']);
      expect(resourcesOf(root, 'test/e2e/term.test.ts')).toEqual(['tmux']);
    });

    it('does not follow production code or type-only imports (a unit test of the driver needs no server)', () => {
      expect(resourcesOf(root, 'src/store/uses-driver.test.ts')).toEqual([]);
      expect(resourcesOf(root, 'src/store/uses-type.test.ts')).toEqual([]);
      expect(slowTestFiles(root)).toEqual(['src/store/hard-coded.test.ts', 'src/store/uses-support.test.ts', 'test/e2e/term.test.ts']);
    });
  });
});
