import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ServerPolicy } from '../runtime/server-policy.js';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { DurableRunDriver } from './durable-driver.js';

let dir: string;
let store: Store;
let driver: DurableRunDriver;
let broken: string;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'sage-admit-checks-')));
  const home = join(dir, 'home');
  mkdirSync(join(home, '.sage'), { recursive: true });
  broken = join(dir, 'root', 'broken');
  mkdirSync(join(broken, '.sage'), { recursive: true });
  // A trailing comma: the file's deny rule would be dropped if the run went on.
  writeFileSync(join(broken, '.sage', 'settings.json'), '{ "permissions": { "deny": ["Bash(rm *)"], } }');
  writeFileSync(join(dir, 'script.json'), JSON.stringify({ turns: [{ text: 'done' }] }));
  store = await openSqliteStore(join(dir, 'sage.db'));
  driver = await DurableRunDriver.open(store, { roots: [join(dir, 'root')], defaultModel: `scripted:${join(dir, 'script.json')}`, serverPolicy: new ServerPolicy({ settings: { home } }), home });
});
afterAll(async () => {
  await driver.runner.close();
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('a server run in a folder whose host settings do not load', () => {
  test('a web run is refused before it is stored: 409 settings_invalid, naming no file to the client', async () => {
    const refused = driver.start({ task: 't', userId: 'alice', cwd: broken } as Parameters<DurableRunDriver['start']>[0]);
    await expect(refused).rejects.toMatchObject({ code: 'settings_invalid' });
    await expect(refused).rejects.not.toThrow(/settings\.json/);
    expect(await store.listRuns({})).toEqual([]);
  });

  test('a chat run is refused the same way (the same admission as a web run)', async () => {
    const refused = driver.admit({ task: 't', surface: 'chat', model: `scripted:${join(dir, 'script.json')}`, cwd: broken, principal: 'telegram:42', chat: { channel: 'telegram', chatId: '42' } });
    await expect(refused).rejects.toMatchObject({ code: 'settings_invalid' });
  });
});
