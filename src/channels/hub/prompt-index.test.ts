import { describe, expect, it } from 'vitest';
import { shortIdOf, SHORT_ID_LENGTH } from '../render.js';
import type { ChatTarget } from './chat-target.js';
import { MAX_CLOSED, PromptIndex, type Prompt } from './prompt-index.js';

const chatA: ChatTarget = { channel: 'slack:A', chatId: 'C1' };
const chatA2: ChatTarget = { channel: 'slack:A', chatId: 'C2' };
const chatB: ChatTarget = { channel: 'slack:B', chatId: 'C1' };

function prompt(id: string, target: ChatTarget, kind: Prompt['kind'] = 'approval'): Prompt {
  return { interactionId: id, runId: 'run_1', matchId: shortIdOf(id), target, kind };
}

/** Ids whose short ids share their first `n` characters (found by trying, as they are hashes). */
function idsSharingPrefix(n: number): [string, string] {
  const seen = new Map<string, string>();
  for (let i = 0; ; i++) {
    const id = `int_${i}`;
    const key = shortIdOf(id).slice(0, n);
    const other = seen.get(key);
    if (other) return [other, id];
    seen.set(key, id);
  }
}

describe('PromptIndex', () => {
  it('finds an open ask by its short id, its full id, or a typed prefix, only in the asking channel', () => {
    const index = new PromptIndex();
    const p = prompt('int_alpha', chatA);
    index.add(p);
    const short = p.matchId.slice(0, SHORT_ID_LENGTH);
    expect(index.find(short, chatA)).toEqual({ type: 'open', prompt: p });
    expect(index.find('int_alpha', chatA)).toEqual({ type: 'open', prompt: p });
    expect(index.find(short.slice(0, 3), chatA2)).toEqual({ type: 'open', prompt: p });
    // Another instance of the same kind, even in a chat with the same id, finds nothing.
    expect(index.find(short, chatB)).toEqual({ type: 'none' });
  });

  it('prefers the asking chat when the same prefix is open in two chats, and calls it ambiguous elsewhere', () => {
    const [first, second] = idsSharingPrefix(2);
    const index = new PromptIndex();
    const inC1 = prompt(first, chatA);
    const inC2 = prompt(second, { channel: 'slack:A', chatId: 'C2' });
    index.add(inC1);
    index.add(inC2);
    const prefix = inC1.matchId.slice(0, 2);
    expect(index.find(prefix, chatA)).toEqual({ type: 'open', prompt: inC1 });
    const elsewhere = index.find(prefix, { channel: 'slack:A', chatId: 'C3' });
    expect(elsewhere.type).toBe('ambiguous');
    expect(elsewhere.type === 'ambiguous' && elsewhere.ids.length).toBe(2);
  });

  it('tells a closed ask from an unknown one, and removes a closed ask from its chat', () => {
    const index = new PromptIndex();
    const p = prompt('int_beta', chatA);
    index.add(p);
    expect(index.waitingIn(chatA)).toEqual([p]);
    index.remove(p);
    index.remember({ ...p, outcome: '✅ Approved by alice' });
    expect(index.waitingIn(chatA)).toEqual([]);
    expect(index.has('int_beta')).toBe(false);
    const found = index.find(p.matchId.slice(0, SHORT_ID_LENGTH), chatA);
    expect(found.type === 'closed' && found.prompt.outcome).toBe('✅ Approved by alice');
    expect(index.find('zzzzzz', chatA)).toEqual({ type: 'none' });
  });

  it('keeps at most MAX_CLOSED closed asks, forgetting the oldest', () => {
    const index = new PromptIndex();
    const oldest = prompt('int_0', chatA);
    index.remember({ ...oldest, outcome: 'done' });
    for (let i = 1; i <= MAX_CLOSED; i++) index.remember({ ...prompt(`int_${i}`, chatA), outcome: 'done' });
    expect(index.find('int_0', chatA)).toEqual({ type: 'none' });
    expect(index.find(`int_${MAX_CLOSED}`, chatA).type).toBe('closed');
  });
});
