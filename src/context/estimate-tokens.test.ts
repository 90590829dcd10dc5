import { describe, expect, it } from 'vitest';
import type { Message } from '../model/types.js';
import { estimateConversationTokens, estimateMessageTokens, estimateTextTokens, MESSAGE_OVERHEAD_TOKENS } from './estimate-tokens.js';

describe('token estimates', () => {
  it('counts four characters per token, rounding up', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('abcde')).toBe(2);
  });

  it('counts tool call input and a per-message overhead', () => {
    const call: Message = { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'Read', input: { path: 'a.txt' } }] };
    const chars = 'c1'.length + 'Read'.length + JSON.stringify({ path: 'a.txt' }).length;
    expect(estimateMessageTokens(call)).toBe(Math.ceil(chars / 4) + MESSAGE_OVERHEAD_TOKENS);
  });

  it('uses the reported usage of the last call, plus estimates for what came after', () => {
    const messages: Message[] = [
      { role: 'user', content: 'Read a.txt' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'Read', input: { path: 'a.txt' } }] },
      { role: 'tool', toolCallId: 'c1', toolName: 'Read', content: 'x'.repeat(400) },
    ];
    const lastCall = { usage: { inputTokens: 1500, outputTokens: 20 }, messageCount: 2, anchor: messages[0] };
    expect(estimateConversationTokens(messages, { lastCall })).toBe(1520 + estimateMessageTokens(messages[2]!));
  });

  it('falls back to the estimate when the history is no longer the one measured', () => {
    const messages: Message[] = [{ role: 'user', content: 'a'.repeat(40) }, { role: 'assistant', content: 'ok' }];
    const stale = { usage: { inputTokens: 99_999, outputTokens: 1 }, messageCount: 2, anchor: { role: 'user', content: 'other' } as Message };
    expect(estimateConversationTokens(messages, { lastCall: stale, system: 'b'.repeat(8) })).toBe(2 + 14 + 5);
  });
});
