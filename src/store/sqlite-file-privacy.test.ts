import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSqliteStore, openStore } from './open-store.js';

const mode = (path: string) => statSync(path).mode & 0o777;

describe('the SQLite store keeps its files private', () => {
  it('creates .sage/ 0700 with a .gitignore, the database and its -wal/-shm 0600', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sage-private-'));
    const store = await openStore({ cwd, env: {} });
    // A write, so the write-ahead log and its index exist.
    await store.createRun({ id: 'r1', userId: 'u', sessionId: 's', channel: 'cli', task: 't', options: {} }, null);
    const dir = join(cwd, '.sage');
    expect(mode(dir)).toBe(0o700);
    for (const file of ['sage.db', 'sage.db-wal', 'sage.db-shm']) expect(mode(join(dir, file))).toBe(0o600);
    const ignore = readFileSync(join(dir, '.gitignore'), 'utf8');
    expect(ignore.split('\n')).toEqual(expect.arrayContaining(['sage.db', 'sage.db-*', '.gitignore']));
    await store.close();
  });

  it('leaves an existing .sage/ and its .gitignore as they are, and still creates the database 0600', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'sage-private-'));
    const dir = join(cwd, '.sage');
    mkdirSync(dir, { mode: 0o755 });
    writeFileSync(join(dir, '.gitignore'), 'mine\n');
    const store = await openStore({ cwd, env: {} });
    expect(mode(dir)).toBe(0o755);
    expect(readFileSync(join(dir, '.gitignore'), 'utf8')).toBe('mine\n');
    expect(mode(join(dir, 'sage.db'))).toBe(0o600);
    await store.close();
  });

  it('creates a --db file 0600, and writes no .gitignore next to it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-private-'));
    const path = join(dir, 'nested', 'runs.db');
    const store = await openSqliteStore(path);
    expect(mode(path)).toBe(0o600);
    expect(existsSync(join(dir, 'nested', '.gitignore'))).toBe(false);
    await store.close();
  });
});
