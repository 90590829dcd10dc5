import { describe, expect, it } from 'vitest';
import { diffLines, unifiedDiff } from './unified-diff.js';

const names = { fromFile: 'a/f', toFile: 'b/f' };

describe('unifiedDiff', () => {
  it('is empty for equal texts', () => {
    expect(unifiedDiff('a\nb\n', 'a\nb\n', names)).toBe('');
  });

  it('splits distant changes into separate hunks with three lines of context', () => {
    const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join('\n');
    const after = before.replace('l2\n', 'L2\n').replace('l18\n', 'L18\n');
    expect(unifiedDiff(before, after, names)).toBe(
      ['--- a/f', '+++ b/f', '@@ -1,5 +1,5 @@', ' l1', '-l2', '+L2', ' l3', ' l4', ' l5', '@@ -15,6 +15,6 @@', ' l15', ' l16', ' l17', '-l18', '+L18', ' l19', ' l20'].join('\n'),
    );
  });

  it('describes pure insertions and deletions with correct ranges', () => {
    expect(unifiedDiff('', 'new\n', names)).toBe('--- a/f\n+++ b/f\n@@ -0,0 +1,1 @@\n+new');
    expect(unifiedDiff('old\n', '', names)).toBe('--- a/f\n+++ b/f\n@@ -1,1 +0,0 @@\n-old');
  });

  it('finds a minimal line diff', () => {
    const ops = diffLines('a\nb\nc\nd\n', 'a\nc\nd\ne\n');
    expect(ops.map((op) => op.type + op.line)).toEqual([' a', '-b', ' c', ' d', '+e']);
  });
});
