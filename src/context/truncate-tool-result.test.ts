import { describe, expect, it } from 'vitest';
import { truncateToolResult } from './truncate-tool-result.js';

describe('truncateToolResult', () => {
  it('leaves a result within the limit untouched', () => {
    expect(truncateToolResult('short', 100)).toBe('short');
  });

  it('keeps the start and the end, says what was cut, and never exceeds the limit', () => {
    const lines = Array.from({ length: 2000 }, (_, i) => `line ${i}`).join('\n');
    const cut = truncateToolResult(lines, 3000);
    expect(cut.length).toBeLessThanOrEqual(3000);
    expect(cut.startsWith('line 0\nline 1\n')).toBe(true);
    expect(cut.endsWith('line 1999')).toBe(true);
    const omitted = Number(/\[… (\d+) characters omitted/.exec(cut)?.[1]);
    const noteStart = cut.indexOf('\n\n[…');
    const noteEnd = cut.lastIndexOf(']\n\n') + 3;
    // Kept head + omitted + kept tail = the whole result.
    expect(noteStart + omitted + (cut.length - noteEnd)).toBe(lines.length);
    expect(cut).toMatch(/ask for a smaller piece/);
  });

  it('cuts at line breaks when one is near', () => {
    const lines = Array.from({ length: 500 }, (_, i) => `entry number ${i}`).join('\n');
    const cut = truncateToolResult(lines, 2000);
    const [head, tail] = [cut.slice(0, cut.indexOf('\n\n[…')), cut.slice(cut.lastIndexOf(']\n\n') + 3)];
    expect(head.split('\n').every((line) => /^entry number \d+$/.test(line) || line === '')).toBe(true);
    expect(tail.split('\n').every((line) => /^entry number \d+$/.test(line))).toBe(true);
  });

  it('degrades to a plain cut when the limit cannot hold the note', () => {
    expect(truncateToolResult('x'.repeat(100), 10)).toBe('x'.repeat(10));
  });
});
