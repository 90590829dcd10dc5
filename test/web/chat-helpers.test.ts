import { describe, expect, it } from 'vitest';
import { parseDiff } from '../../web/src/components/DiffView.js';
import { jsonErrorOffset, lineColumn } from '../../web/src/json-position.js';
import { describeAnswerError, relativeTime } from '../../web/src/relative-time.js';

// The chat page's pure helpers (the browser tests in test/browser/chat-*.test.ts show them in use).
describe('jsonErrorOffset', () => {
  it('accepts what JSON.parse accepts', () => {
    for (const text of ['{}', '[]', ' {"a": [1, -2.5e3, true, false, null, "x\\u00e9\\n"]} ', '"s"', '0']) {
      expect(() => JSON.parse(text)).not.toThrow();
      expect(jsonErrorOffset(text)).toBeUndefined();
    }
  });

  it('points at the first wrong character, as a line and column', () => {
    const text = '{\n  "target": "prod",\n  "replicas": two\n}';
    expect(lineColumn(text, jsonErrorOffset(text)!)).toEqual({ line: 3, column: 15 });
    expect(jsonErrorOffset('{"a": 1,}')).toBe(8);
    expect(jsonErrorOffset("{'a': 1}")).toBe(1);
    expect(jsonErrorOffset('{"a": 01}')).toBe(7);
    expect(jsonErrorOffset('[1 2]')).toBe(3);
    expect(jsonErrorOffset('{"a": "\\x"}')).toBe(8);
    expect(jsonErrorOffset('{"a": "\\u12g4"}')).toBe(11);
  });

  it('says the text ends too early at its end, and rejects trailing text', () => {
    expect(jsonErrorOffset('{"a": [1, 2')).toBe(11);
    expect(jsonErrorOffset('"open')).toBe(5);
    expect(jsonErrorOffset('{} x')).toBe(3);
    expect(jsonErrorOffset('')).toBe(0);
  });

  it('refuses raw control characters inside strings, as JSON.parse does', () => {
    expect(() => JSON.parse('"a\tb"')).toThrow();
    expect(jsonErrorOffset('"a\tb"')).toBe(2);
  });
});

describe('parseDiff', () => {
  it('numbers old and new lines from the hunk header and drops the file header', () => {
    const rows = parseDiff('--- a.ts\n+++ a.ts\n@@ -10,3 +10,3 @@\n keep\n-old\n+new\n tail');
    expect(rows.map((r) => [r.type, r.text, r.oldNo, r.newNo])).toEqual([
      ['@', '@@ -10,3 +10,3 @@', undefined, undefined],
      [' ', 'keep', 10, 10],
      ['-', 'old', 11, undefined],
      ['+', 'new', undefined, 11],
      [' ', 'tail', 12, 12],
    ]);
  });

  it('does not read a line that looks like a header inside a hunk as one', () => {
    const rows = parseDiff('@@ -1,1 +1,1 @@\n---x\n+++y');
    expect(rows.slice(1).map((r) => [r.type, r.text])).toEqual([
      ['-', '--x'],
      ['+', '++y'],
    ]);
  });
});

describe('describeAnswerError', () => {
  it("turns the server's 409 into who and when in words, without the id or the ISO time", () => {
    const at = new Date(Date.now() - 3 * 60_000).toISOString();
    const text = describeAnswerError('interaction_already_answered', `Interaction "run_1:call_0:permission" was already answered by bob at ${at}.`);
    expect(text).toBe('Already answered by bob 3 minutes ago (in another tab or window). This page will catch up in a moment.');
  });

  it('leaves other errors as the server said them', () => {
    expect(describeAnswerError('invalid_response', 'rule must be one of …')).toBe('rule must be one of …');
  });

  it('says "someone" when the server does not name who answered', () => {
    expect(describeAnswerError('interaction_already_answered', 'Interaction "x" was already answered.')).toMatch(/^Already answered by someone \(/);
  });

  it('words times relative to now', () => {
    const now = Date.parse('2026-01-01T12:00:00Z');
    expect(relativeTime('2026-01-01T11:59:55Z', now)).toBe('just now');
    expect(relativeTime('2026-01-01T11:00:00Z', now)).toBe('1 hour ago');
    expect(relativeTime('2025-12-30T12:00:00Z', now)).toBe('2 days ago');
    expect(relativeTime('not a date', now)).toBe('not a date');
  });
});
