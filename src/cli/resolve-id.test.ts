import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { InteractionRequest } from '../interaction/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import { resolveId } from './resolve-id.js';

let dir: string;
let store: SqlStore;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-resolve-id-'));
  store = await openSqliteStore(join(dir, 'sage.db'));
});
afterEach(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

const create = (id: string) => store.createRun({ id, userId: 'alice', sessionId: id, channel: 'cli', task: 't', options: { model: 'scripted:x' } }, null);
const ask = (runId: string, id: string) => store.saveInteraction({ id, runId, kind: 'confirm', title: 'Allow Bash?', createdAt: new Date().toISOString() } as InteractionRequest);

describe('resolveId', () => {
  it('takes an exact id first, even when it also starts a longer one', async () => {
    await create('run_abcdefgh');
    await create('run_abcdefgh2');
    await expect(resolveId(store, 'run', 'run_abcdefgh')).resolves.toBe('run_abcdefgh');
  });

  it('takes a start of at least 8 characters that names one id', async () => {
    await create('run_1234aaaa');
    await create('run_5678bbbb');
    await expect(resolveId(store, 'run', 'run_1234')).resolves.toBe('run_1234aaaa');
    await ask('run_1234aaaa', 'run_1234aaaa:c1:permission');
    await expect(resolveId(store, 'interaction', 'run_1234aaaa:c')).resolves.toBe('run_1234aaaa:c1:permission');
  });

  it('refuses a start shorter than 8 characters as not found, though it names one id', async () => {
    await create('run_1234aaaa');
    await expect(resolveId(store, 'run', 'run_123')).rejects.toMatchObject({ code: 'run_not_found' });
  });

  it('refuses an ambiguous start with a usage error naming at most 5 of the ids', async () => {
    for (let n = 1; n <= 7; n++) await create(`run_same000${n}`);
    const error = (await resolveId(store, 'run', 'run_same').then(() => undefined, (e: unknown) => e)) as Error & { code: string };
    expect(error).toMatchObject({ code: 'usage_error' });
    expect(error.message).toContain('"run_same" starts more than one run id (run_same0001, run_same0002, run_same0003, run_same0004, run_same0005, …)');
    expect(error.message).not.toContain('run_same0006');
  });

  it('reports a start that names nothing with the not-found error of its kind, and does not treat _ or % as wildcards', async () => {
    await create('run_1234aaaa');
    await expect(resolveId(store, 'run', 'run_9999')).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(resolveId(store, 'run', 'run%1234')).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(resolveId(store, 'run', 'run_123_')).rejects.toMatchObject({ code: 'run_not_found' });
    await expect(resolveId(store, 'interaction', 'run_1234aaaa:c')).rejects.toMatchObject({ code: 'interaction_not_found' });
  });
});
