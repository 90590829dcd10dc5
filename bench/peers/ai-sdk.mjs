// AI SDK tool loop: generateText + MockLanguageModelV3 (ai/test), one echo call per turn, then "done".
import { generateText, stepCountIs, tool } from 'ai';
import { MockLanguageModelV3 } from 'ai/test';
import { z } from 'zod';
import { decide, measure, settings, versionOf } from './harness.mjs';

const { n } = settings();
const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };
const model = new MockLanguageModelV3({
  doGenerate: async ({ prompt }) => {
    let done = 0;
    for (const m of prompt) if (m.role === 'tool') for (const p of m.content) if (p.type === 'tool-result') done++;
    const d = decide(done, n);
    return d.kind === 'call'
      ? { content: [{ type: 'tool-call', toolCallId: d.id, toolName: 'echo', input: JSON.stringify(d.input) }], finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage, warnings: [] }
      : { content: [{ type: 'text', text: d.text }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] };
  },
});
model.doGenerateCalls = { push() {} }; // the mock records every call otherwise (memory grows)
const tools = { echo: tool({ description: 'echo', inputSchema: z.object({ i: z.number() }), execute: async ({ i }) => `ok ${i}` }) };

await measure(
  'ai-sdk',
  async () => {
    const r = await generateText({ model, tools, prompt: 'go', stopWhen: stepCountIs(n + 2) });
    if (r.text !== 'done') throw new Error(`ai-sdk: unexpected final text ${JSON.stringify(r.text)}`);
    return r.steps.length;
  },
  { version: `ai ${await versionOf('ai')}` },
);
