import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PermissionDecision } from '../permission/types.js';
import { approvalPreview } from './approval-preview.js';

const dir = mkdtempSync(join(tmpdir(), 'sage-preview-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const ask = (risk?: PermissionDecision['risk'], forced?: boolean): PermissionDecision => ({ behavior: 'ask', reason: 'r', source: 'risk', ...(risk ? { risk } : {}), ...(forced ? { forced } : {}) });

describe('approvalPreview', () => {
  it('shows an Edit as a diff of the file before approval, with the path relative to the project', async () => {
    mkdirSync(join(dir, 'src'), { recursive: true });
    writeFileSync(join(dir, 'src', 'a.ts'), 'one\ntwo\nthree\n');
    const p = await approvalPreview('Edit', { file_path: join(dir, 'src', 'a.ts'), old_string: 'two', new_string: 'TWO' }, dir, ask('MEDIUM'));
    expect(p.risk).toBe('MEDIUM');
    expect(p.path).toBe('src/a.ts');
    expect(p.diff).toBe('--- src/a.ts\n+++ src/a.ts\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three');
    expect(p.diff).not.toContain('a//');
  });

  it('treats the replacement literally ($& is not a back-reference), as the tool does', async () => {
    writeFileSync(join(dir, 'dollar.txt'), 'x = 1\n');
    const p = await approvalPreview('Edit', { file_path: 'dollar.txt', old_string: '1', new_string: '$&$&' }, dir, ask());
    expect(p.diff).toContain('+x = $&$&');
  });

  it('says why there is no diff when old_string is not in the file', async () => {
    const p = await approvalPreview('Edit', { file_path: 'dollar.txt', old_string: 'missing', new_string: 'x' }, dir, ask());
    expect(p.diff).toBeUndefined();
    expect(p.previewError).toContain('old_string was not found in dollar.txt');
  });

  it('shows a Write of a new file as the whole new file, and of an existing one as a diff', async () => {
    const created = await approvalPreview('Write', { file_path: 'new.txt', content: 'hello\nworld\n' }, dir, ask('MEDIUM'));
    expect(created).toMatchObject({ path: 'new.txt', newFile: true, diff: '--- /dev/null\n+++ new.txt\n@@ -0,0 +1,2 @@\n+hello\n+world' });
    writeFileSync(join(dir, 'old.txt'), 'hello\n');
    const replaced = await approvalPreview('Write', { file_path: 'old.txt', content: 'bye\n' }, dir, ask('MEDIUM'));
    expect(replaced.newFile).toBeUndefined();
    expect(replaced.diff).toContain('-hello\n+bye');
  });

  it('keeps a path outside the project absolute, so it is never mistaken for a project file', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'sage-outside-'));
    try {
      const p = await approvalPreview('Write', { file_path: join(outside, 'x.txt'), content: 'x' }, dir, ask('HIGH'));
      expect(p.path).toBe(join(outside, 'x.txt'));
      expect(p.risk).toBe('HIGH');
    } finally {
      rmSync(outside, { recursive: true, force: true });
    }
  });

  it('marks a forced ask as high risk, and gives other tools the risk alone', async () => {
    expect(await approvalPreview('Bash', { command: 'rm -rf /etc' }, dir, ask(undefined, true))).toEqual({ risk: 'HIGH' });
    expect(await approvalPreview('Bash', { command: 'touch x' }, dir, ask())).toEqual({});
  });

  it('does not read a directory or a huge file', async () => {
    expect((await approvalPreview('Write', { file_path: 'src', content: 'x' }, dir, ask())).previewError).toBe('the path is a directory');
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(600 * 1024));
    expect((await approvalPreview('Write', { file_path: 'big.txt', content: 'x' }, dir, ask())).previewError).toContain('no preview');
  });
});
