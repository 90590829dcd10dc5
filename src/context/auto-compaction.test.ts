import { describe, expect, it } from 'vitest';
import type { Message, Model, ModelRequest } from '../model/types.js';
import { createAutoCompaction } from './auto-compaction.js';

/** Answers normal calls with "ok" and the usage given; answers summary requests (no tools) with a summary. */
function fakeModel(inputTokens: number): Model & { requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    specificationVersion: 'sage.model.v1',
    id: 'fake:model',
    contextWindow: 10_000,
    requests,
    async *stream(request) {
      requests.push(request);
      yield { type: 'text-delta', text: request.tools.length === 0 ? 'the summary' : 'ok' };
      yield { type: 'finish', finishReason: 'stop', usage: { inputTokens, outputTokens: 5 } };
    },
  };
}

async function call(model: Model, messages: Message[]): Promise<void> {
  const tools = [{ name: 'Read', description: 'Reads.', inputSchema: { type: 'object' } }];
  let text = '';
  for await (const part of model.stream({ messages, tools })) if (part.type === 'text-delta') text += part.text;
  messages.push({ role: 'assistant', content: text });
}

describe('createAutoCompaction', () => {
  it('compacts when the reported usage passes the threshold, though the text is short', async () => {
    const inner = fakeModel(9_000);
    const compaction = createAutoCompaction({ model: inner, threshold: 0.8, keepRecent: 2 });
    const messages: Message[] = [{ role: 'user', content: 'one' }];
    await call(compaction.model, messages);
    messages.push({ role: 'user', content: 'two' }, { role: 'assistant', content: 'three' }, { role: 'user', content: 'four' });

    const prepared = await compaction.prepareMessages(messages, new AbortController().signal);

    expect(prepared?.event).toMatchObject({ removedMessages: 3, tokensBefore: 9_005 + 5 + 6 + 5 });
    expect(prepared?.messages[0]!.content).toContain('the summary');
    expect(prepared?.messages.slice(1)).toEqual(messages.slice(3));
  });

  it('does nothing while the conversation fits', async () => {
    const compaction = createAutoCompaction({ model: fakeModel(100) });
    const messages: Message[] = [{ role: 'user', content: 'one' }];
    await call(compaction.model, messages);
    expect(await compaction.prepareMessages(messages, new AbortController().signal)).toBeUndefined();
  });
});
