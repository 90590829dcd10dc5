// `sage run --detach` picks its model as a run in the foreground does: --model, else the `model`
// setting, else the key that is set. Build first: npm run build.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteStore } from '../../src/store/open-store.js';
import { runCli, writeScript } from '../support/cli.js';

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sage-detach-model-'));
  db = join(dir, 'sage.db');
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('sage run --detach and the model setting', { timeout: 120_000 }, () => {
  it('stores the run with the model the user settings name when no --model is given (no API key set)', async () => {
    const script = writeScript([{ text: 'done' }]);
    // The user's settings, in a home apart from the run's folder (a project's own model waits for trust).
    const home = join(dir, 'home');
    const project = join(dir, 'project');
    mkdirSync(join(home, '.sage'), { recursive: true });
    mkdirSync(project);
    writeFileSync(join(home, '.sage', 'settings.json'), JSON.stringify({ model: `scripted:${script}` }));
    const started = await runCli(['run', '--detach', '--json', '--db', db, 'say done'], { cwd: project, env: { SAGE_HOME: home, SAGE_DATABASE_URL: '' } });
    expect(started.stderr).toBe('');
    expect(started.code).toBe(0);
    const { runId } = JSON.parse(started.stdout) as { runId: string };
    const store = await openSqliteStore(db);
    try {
      expect((await store.getRun(runId))?.options['model']).toBe(`scripted:${script}`);
    } finally {
      await store.close();
    }
  });
});
