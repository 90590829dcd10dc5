import { describe, expect, it } from 'vitest';
import { TextPool } from './index.js';

describe('TextPool', () => {
  it('hands back the copy it keeps for an equal text, and keeps at most max texts, the oldest going first', () => {
    const pool = new TextPool(2);
    const a = pool.share(['prompt', 'a'].join(' '));
    expect(pool.share(['prompt', 'a'].join(' '))).toBe(a);
    pool.share('b');
    pool.share('c'); // 'prompt a' goes
    const again = ['prompt', 'a'].join(' ');
    expect(pool.share(again)).toBe(again);
  });
});
