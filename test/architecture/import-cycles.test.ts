import { describe, expect, it } from 'vitest';
import { cycles, importEdges, type ImportEdge } from './import-graph.js';

const edge = (from: string, to: string, kind: ImportEdge['kind'] = 'static'): ImportEdge => ({ from, to, kind });

describe('runtime import cycles between files', () => {
  it('finds none across src/: files that import each other see each other half-initialised', () => {
    const runtime = importEdges().filter((e) => e.kind === 'static');
    expect(runtime.length).toBeGreaterThan(500);
    expect(cycles(runtime)).toEqual([]);
  });

  it('reports a circle of files as one group, and a file that imports itself', () => {
    const found = cycles([edge('a', 'b'), edge('b', 'c'), edge('c', 'a'), edge('c', 'd'), edge('e', 'e'), edge('d', 'f')]);
    expect(found).toEqual([['a', 'b', 'c'], ['e']]);
  });
});
