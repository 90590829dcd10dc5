import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDirs } from '../test-support/temp-dir.js';
import { comparePaths, walkFiles } from './walk-files.js';

const tempDir = useTempDirs();

async function tree(files: Record<string, string>): Promise<string> {
  const root = await tempDir();
  for (const [name, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), content);
  }
  return root;
}

async function listed(root: string, options: { enterDir?: (dir: string) => boolean } = {}): Promise<string[]> {
  const { files } = await walkFiles({ root, ...options });
  return files.map((f) => f.relativePath).sort(comparePaths);
}

describe('walkFiles', () => {
  it('honours nested .gitignore files, negations and directory rules', async () => {
    const root = await tree({
      '.gitignore': '*.log\nbuild/\n',
      'a.log': '',
      'build/x.js': '',
      'src/.gitignore': '!keep.log\ngen/\n',
      'src/keep.log': '',
      'src/drop.txt': '',
      'src/gen/out.ts': '',
      'src/main.ts': '',
    });
    expect(await listed(root)).toEqual(['.gitignore', 'src/.gitignore', 'src/drop.txt', 'src/keep.log', 'src/main.ts']);
  });

  it('applies the .gitignore of parent folders up to the repository top', async () => {
    const root = await tree({ '.git/HEAD': '', '.gitignore': 'secret.txt\n', 'pkg/secret.txt': '', 'pkg/ok.txt': '' });
    expect(await listed(path.join(root, 'pkg'))).toEqual(['ok.txt']);
  });

  it('always skips .git and node_modules, and prunes with enterDir', async () => {
    const root = await tree({ '.git/config': '', 'node_modules/a/i.js': '', 'x/y.ts': '', 'z/w.ts': '' });
    expect(await listed(root)).toEqual(['x/y.ts', 'z/w.ts']);
    expect(await listed(root, { enterDir: (dir) => dir === 'x' })).toEqual(['x/y.ts']);
  });

  it('orders paths component by component', () => {
    expect(['a-c', 'a/b', 'a.txt', 'B'].sort(comparePaths)).toEqual(['B', 'a/b', 'a-c', 'a.txt']);
    expect(comparePaths('a/b', 'a-c')).toBeLessThan(0);
  });
});
