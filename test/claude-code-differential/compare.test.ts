import { describe, expect, it } from 'vitest';
import { isLooser, isStricter } from './compare.js';

describe('differential comparison', () => {
  it('calls Sage looser when it lets through or only asks about what Claude Code stops', () => {
    expect(isLooser('allow', 'ask')).toBe(true);
    expect(isLooser('allow', 'deny')).toBe(true);
    expect(isLooser('ask', 'deny')).toBe(true);
    expect(isLooser('allow', 'allow')).toBe(false);
    expect(isLooser('deny', 'allow')).toBe(false);
    expect(isLooser('ask', 'ask')).toBe(false);
  });

  it('calls Sage stricter when it stops what Claude Code lets through, and never counts an unknown either way', () => {
    expect(isStricter('deny', 'allow')).toBe(true);
    expect(isStricter('deny', 'ask')).toBe(true);
    expect(isStricter('ask', 'allow')).toBe(true);
    expect(isStricter('allow', 'deny')).toBe(false);
    for (const sage of ['allow', 'ask', 'deny'] as const) {
      expect(isLooser(sage, 'unknown')).toBe(false);
      expect(isStricter(sage, 'unknown')).toBe(false);
    }
  });
});
