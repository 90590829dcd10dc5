import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importEdges, ROOT, sourceFiles } from './import-graph.js';

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'sage-import-graph-'));
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  return dir;
}

function kinds(files: Record<string, string>): string[] {
  const dir = tree(files);
  const at = (path: string) => relative(dir, join(ROOT, path));
  return importEdges(sourceFiles(dir))
    .map((e) => `${at(e.from)} -> ${e.to.includes('/') ? at(e.to) : e.to} ${e.kind}`)
    .sort();
}

describe('the import graph', () => {
  it('tells imports TypeScript keeps from those it erases, as it emits them', () => {
    const found = kinds({
      'a/used.ts': "import { A } from '../b/value.js';\nexport const x = A;\n",
      'a/as-type.ts': "import { B } from '../b/value.js';\nexport let y: B | undefined;\n",
      'a/type-only.ts': "import type { C } from '../b/value.js';\nexport let z: C | undefined;\n",
      'a/typeof.ts': "import { D } from '../b/value.js';\nexport let w: typeof D | undefined;\n",
      'a/extends.ts': "import { E } from '../b/value.js';\nexport class F extends E {}\n",
      'a/implements.ts': "import { G } from '../b/value.js';\nexport class H implements G {}\n",
      'a/reexport.ts': "export { A } from '../b/value.js';\n",
      'a/reexport-type.ts': "export type { A } from '../b/value.js';\n",
      'a/side-effect.ts': "import '../b/value.js';\n",
      'a/lazy.ts': "export const load = () => import('../b/index.js');\n",
      'a/package.ts': "export const load = () => import('pg');\n",
      'a/computed.ts': "export const load = (name: string) => import(name);\n",
      'b/value.ts': 'export const A = 1;\n',
      'b/index.ts': 'export {};\n',
    });
    expect(found).toEqual([
      'a/extends.ts -> b/value.ts static',
      'a/implements.ts -> b/value.ts type',
      'a/lazy.ts -> b/index.ts dynamic',
      'a/package.ts -> pg dynamic',
      'a/computed.ts -> (expression) dynamic',
      'a/reexport-type.ts -> b/value.ts type',
      'a/reexport.ts -> b/value.ts static',
      'a/side-effect.ts -> b/value.ts static',
      'a/type-only.ts -> b/value.ts type',
      'a/typeof.ts -> b/value.ts type',
      'a/as-type.ts -> b/value.ts type',
      'a/used.ts -> b/value.ts static',
    ].sort());
  });

  it('leaves tests and test-support folders out', () => {
    const dir = tree({ 'a/x.ts': '', 'a/x.test.ts': '', 'a/test-support/y.ts': '' });
    expect(sourceFiles(dir).map((f) => relative(dir, f))).toEqual(['a/x.ts']);
  });
});
