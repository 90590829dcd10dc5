import { describe, expect, it } from 'vitest';
import { CappedOutput } from './capped-output.js';
import { truncateMiddle } from './truncate-middle.js';

describe('CappedOutput', () => {
  it('keeps everything under the cap', () => {
    const out = new CappedOutput(10);
    out.append('abc');
    out.append('def');
    expect(out.toString()).toBe('abcdef');
    expect(out.truncated).toBe(0);
  });

  it('keeps the head and the tail across many chunks', () => {
    const out = new CappedOutput(10);
    for (let i = 0; i < 1_000; i++) out.append(String(i % 10));
    expect(out.truncated).toBe(990);
    expect(out.toString()).toBe('01234\n[... 990 characters truncated ...]\n56789');
  });
});

describe('truncateMiddle', () => {
  it('marks how many characters were cut', () => {
    expect(truncateMiddle('abcdefghij', 4)).toEqual({ text: 'ab\n[... 6 characters truncated ...]\nij', truncated: 6 });
    expect(truncateMiddle('short', 10)).toEqual({ text: 'short', truncated: 0 });
  });
});
