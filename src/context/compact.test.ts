import { describe, expect, it } from 'vitest';
import type { Message, Model, ModelRequest } from '../model/types.js';
import { compactIfNeeded, compactMessages } from './compact.js';

/** A model that summarises by announcing what it read, and records each request. */
function summariser(reply = 'SUMMARY: the user wants a.txt fixed; a.txt was read.'): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    specificationVersion: 'sage.model.v1',
    id: 'fake:summariser',
    requests,
    async *stream(request) {
      requests.push(request);
      if (reply) yield { type: 'text-delta', text: reply };
      yield { type: 'finish', finishReason: 'stop', usage: { inputTokens: 10, outputTokens: 10 } };
    },
  };
}

const long = (tag: string) => `${tag} `.repeat(200);
const conversation: Message[] = [
  { role: 'system', content: 'You are Sage.' },
  { role: 'user', content: `Fix a.txt. ${long('task')}` },
  { role: 'assistant', content: 'Reading it.', toolCalls: [{ id: 'c1', name: 'Read', input: { path: 'a.txt' } }] },
  { role: 'tool', toolCallId: 'c1', toolName: 'Read', content: long('old-content') },
  { role: 'assistant', content: `Found the bug. ${long('analysis')}` },
  { role: 'user', content: 'Go ahead.' },
  { role: 'assistant', content: 'Editing.', toolCalls: [{ id: 'c2', name: 'Edit', input: { path: 'a.txt' } }] },
  { role: 'tool', toolCallId: 'c2', toolName: 'Edit', content: 'ok' },
];

describe('compactIfNeeded', () => {
  it('does nothing below the threshold, without calling the model', async () => {
    const model = summariser();
    const result = await compactIfNeeded(conversation, { model, contextWindow: 1_000_000 });
    expect(result).toMatchObject({ compacted: false, reason: 'below_threshold' });
    expect(result.messages).toEqual(conversation);
    expect(model.requests).toHaveLength(0);
  });

  it('summarises older turns, keeping the system prompt and the recent turns with their tool results', async () => {
    const model = summariser();
    const result = await compactIfNeeded(conversation, { model, contextWindow: 1000, threshold: 0.5, keepRecent: 2 });
    if (!result.compacted) throw new Error('expected compaction');

    expect(result.messages[0]).toEqual(conversation[0]);
    expect(result.messages[1]).toMatchObject({ role: 'user', content: expect.stringContaining('SUMMARY: the user wants a.txt fixed') });
    expect(result.messages[1]!.content).toMatch(/5 earliest messages/);
    // keepRecent 2 would start at the tool result; the cut moves back to its call.
    expect(result.messages.slice(2)).toEqual(conversation.slice(6));
    expect(result.stats).toMatchObject({ removedMessages: 5, summaryChars: 'SUMMARY: the user wants a.txt fixed; a.txt was read.'.length });
    expect(result.stats.tokensAfter).toBeLessThan(result.stats.tokensBefore);
  });

  it('asks for the summary with no tools, the history written out as a transcript', async () => {
    const model = summariser();
    await compactIfNeeded(conversation, { model, contextWindow: 1000, threshold: 0.5, keepRecent: 2 });
    const request = model.requests[0]!;
    expect(request.tools).toEqual([]);
    expect(request.system).toMatch(/compress the history/);
    expect(request.messages).toHaveLength(1);
    const transcript = request.messages[0]!.content;
    expect(transcript).toContain('[user]\nFix a.txt.');
    expect(transcript).toContain('[agent called tool Read (call c1)]\n{"path":"a.txt"}');
    expect(transcript).toContain('[result of tool Read (call c1)]');
    expect(transcript).toContain('[user]\nGo ahead.');
    expect(transcript).not.toContain('Editing.');
  });

  it('keeps an unresolved tool call and everything after it', async () => {
    const pending: Message[] = [
      ...conversation.slice(0, 5),
      { role: 'assistant', content: '', toolCalls: [{ id: 'c9', name: 'Bash', input: { command: 'rm -rf build' } }] },
      { role: 'user', content: 'Wait, first tell me why.' },
      { role: 'assistant', content: 'Because the build is stale.' },
    ];
    const result = await compactMessages(pending, { model: summariser(), contextWindow: 1000, keepRecent: 1 });
    if (!result.compacted) throw new Error('expected compaction');
    expect(result.messages.slice(2)).toEqual(pending.slice(5));
  });

  it('reports nothing to compact when every message must stay', async () => {
    const result = await compactMessages(conversation.slice(0, 2), { model: summariser(), contextWindow: 100, keepRecent: 6 });
    expect(result).toMatchObject({ compacted: false, reason: 'nothing_to_compact' });
  });

  it('fails with a typed error, leaving the conversation alone, when the summary is empty', async () => {
    const error = await compactMessages(conversation, { model: summariser(''), contextWindow: 1000, keepRecent: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'context_compaction_failed' });
  });

  it('wraps a failing summariser in a typed error with the cause', async () => {
    const failing: Model = {
      specificationVersion: 'sage.model.v1',
      id: 'fake:broken',
      // eslint-disable-next-line require-yield
      async *stream() {
        throw new Error('provider down');
      },
    };
    const error = await compactMessages(conversation, { model: failing, contextWindow: 1000, keepRecent: 2 }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'context_compaction_failed', message: expect.stringContaining('provider down') });
  });
});
