import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { checkDbPath, checkTrajectoryPath } from './output-path.js';

describe('output paths checked before a run starts', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'sage-output-path-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses a folder as --trajectory or --db, naming the flag', () => {
    expect(() => checkTrajectoryPath(dir)).toThrow(new RegExp(`--trajectory ${dir} is a folder`));
    expect(() => checkDbPath(dir)).toThrow(new RegExp(`--db ${dir} is a folder`));
  });

  it('refuses a path that runs through a file, and creates nothing', () => {
    const file = join(dir, 'plain.txt');
    writeFileSync(file, 'x');
    expect(() => checkTrajectoryPath(join(file, 'sub', 't.jsonl'))).toThrow(/--trajectory .* cannot be created: .*plain\.txt is a file, not a folder/);
    expect(() => checkDbPath(join(file, 'x.db'))).toThrow(/--db .* cannot be created: .*plain\.txt is a file, not a folder/);
    expect(statSync(file).isFile()).toBe(true);
  });

  it('refuses a place where folders cannot be made, without hanging (/proc on Node 20)', () => {
    expect(() => checkTrajectoryPath('/proc/sage-no-such-dir/t.jsonl')).toThrow(/--trajectory .* cannot be written/);
  });

  it('accepts a new path: the trajectory file and the folders are created, the database file is not', () => {
    const trajectory = join(dir, 'a', 'b', 't.jsonl');
    expect(checkTrajectoryPath(trajectory)).toBe(trajectory);
    expect(existsSync(trajectory)).toBe(true);
    const db = join(dir, 'c', 'sage.db');
    expect(checkDbPath(db)).toBe(db);
    expect(existsSync(join(dir, 'c'))).toBe(true);
    expect(existsSync(db)).toBe(false);
  });
});
