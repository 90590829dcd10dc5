import { describe, expect, it } from 'vitest';
import { fitPrompt, splitText } from './chat-text.js';

describe('splitText', () => {
  it('cuts at line ends, in order, and joined with newlines gives the text back', () => {
    const text = ['first line', 'second line', 'third line that is longer'].join('\n');
    const parts = splitText(text, 25);
    expect(parts.every((p) => p.length <= 25)).toBe(true);
    expect(parts.join('\n')).toBe(text);
  });

  it('cuts a line longer than the limit inside it, losing nothing', () => {
    const parts = splitText('x'.repeat(25), 10);
    expect(parts.map((p) => p.length)).toEqual([10, 10, 5]);
  });

  it('leaves a short text, or one with no limit, whole', () => {
    expect(splitText('hello', 10)).toEqual(['hello']);
    expect(splitText('hello', undefined)).toEqual(['hello']);
  });
});

describe('fitPrompt', () => {
  it('keeps the id line and the typed commands of an over-long prompt, cutting its middle', () => {
    const text = ['[abc123] Approve Bash?', 'y'.repeat(500), '/approve abc123 once|always|deny'].join('\n');
    const fitted = fitPrompt(text, 120);
    expect(fitted.length).toBeLessThanOrEqual(120);
    expect(fitted.startsWith('[abc123] Approve Bash?\n')).toBe(true);
    expect(fitted.endsWith('…\n/approve abc123 once|always|deny')).toBe(true);
  });

  it('leaves a prompt that fits as it is', () => {
    expect(fitPrompt('a\nb\nc', 100)).toBe('a\nb\nc');
  });
});
