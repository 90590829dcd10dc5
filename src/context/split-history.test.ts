import { describe, expect, it } from 'vitest';
import type { Message } from '../model/types.js';
import { splitHistory } from './split-history.js';

const user = (content: string): Message => ({ role: 'user', content });
const said = (content: string): Message => ({ role: 'assistant', content });
const calls = (...ids: string[]): Message => ({ role: 'assistant', content: '', toolCalls: ids.map((id) => ({ id, name: 'Read', input: { path: id } })) });
const result = (id: string): Message => ({ role: 'tool', toolCallId: id, toolName: 'Read', content: `content of ${id}` });

describe('splitHistory', () => {
  it('keeps the leading system messages apart and the last keepRecent messages verbatim', () => {
    const messages = [{ role: 'system', content: 'rules' } as Message, user('a'), said('b'), user('c'), said('d')];
    const split = splitHistory(messages, 2);
    expect(split.head).toEqual([messages[0]]);
    expect(split.older).toEqual([user('a'), said('b')]);
    expect(split.recent).toEqual([user('c'), said('d')]);
  });

  it('never separates tool results from the call that asked for them', () => {
    const messages = [user('go'), calls('x', 'y'), result('x'), result('y'), said('done')];
    const split = splitHistory(messages, 2);
    expect(split.older).toEqual([user('go')]);
    expect(split.recent[0]).toEqual(calls('x', 'y'));
    expect(split.recent).toHaveLength(4);
  });

  it('keeps everything from the first unresolved tool call on', () => {
    const messages = [user('1'), calls('open'), user('2'), said('3'), user('4'), said('5')];
    const split = splitHistory(messages, 1);
    expect(split.older).toEqual([user('1')]);
    expect(split.recent[0]).toEqual(calls('open'));
  });

  it('has nothing older when the conversation is shorter than keepRecent', () => {
    expect(splitHistory([user('a'), said('b')], 6).older).toEqual([]);
  });
});
