import { afterEach, expect, it } from 'vitest';
import { z } from 'zod';
import { createAutoCompaction } from '../../src/context/index.js';
import type { RunEvent } from '../../src/events/index.js';
import { run } from '../../src/loop/index.js';
import { resolveModel, withRecovery } from '../../src/model/index.js';
import { startFakeAnthropic, type FakeProviderServer, type FakeTurn, type RecordedRequest } from '../../src/testing/fake-providers/index.js';
import { defineTool } from '../../src/tool/index.js';

/**
 * A long conversation through the real Anthropic package and a fake Messages API: every step
 * adds a large tool result, the window is small, so the run compacts on the way and must still
 * finish its task. The fake refuses, as Anthropic does, a tool result whose call is not in the
 * message before it, so a compaction that split a call from its result would fail the run.
 */

const STEPS = 12;
let server: FakeProviderServer;
afterEach(() => server?.close());

const measure = defineTool({
  name: 'Measure',
  description: 'Measures one sample and returns its readings.',
  inputSchema: z.object({ sample: z.number().int() }),
  risk: 'LOW',
  readOnly: true,
  async execute({ sample }) {
    return `Readings for sample ${sample}:\n${`reading ${sample}: 0.${sample}42 ok\n`.repeat(120)}`;
  },
});

/** Anthropic's rule: each tool_result answers a tool_use of the assistant message right before it. */
function pairingError(request: RecordedRequest): string | undefined {
  const messages = request.body.messages as Array<{ role: string; content: unknown }>;
  for (let i = 0; i < messages.length; i++) {
    const content = Array.isArray(messages[i]!.content) ? (messages[i]!.content as Array<Record<string, unknown>>) : [];
    for (const block of content.filter((b) => b.type === 'tool_result')) {
      const previous = messages[i - 1];
      const uses = previous?.role === 'assistant' && Array.isArray(previous.content) ? (previous.content as Array<Record<string, unknown>>) : [];
      if (!uses.some((u) => u.type === 'tool_use' && u.id === block.tool_use_id)) return `messages.${i}: unexpected tool_use_id ${String(block.tool_use_id)} in tool_result blocks`;
    }
  }
  return undefined;
}

it('compacts a long conversation on the way and still completes the task', async () => {
  let step = 0;
  const summaries: RecordedRequest[] = [];
  server = await startFakeAnthropic({
    apiKey: 'k',
    whenEmpty: (request): FakeTurn => {
      const problem = pairingError(request);
      if (problem) return { status: 400, message: problem };
      if (!request.body.tools) {
        summaries.push(request);
        return { text: `So far the agent measured samples 1 to ${step}; each was ok. Continue with sample ${step + 1}.` };
      }
      step++;
      if (step <= STEPS) return { text: `Measuring sample ${step}.`, toolCalls: [{ name: 'Measure', input: { sample: step } }] };
      return { text: `All ${STEPS} samples measured; every reading was ok.` };
    },
  });
  const model = withRecovery(resolveModel('anthropic:claude-sonnet-4-5', { baseUrl: server.url, env: { ANTHROPIC_API_KEY: 'k' }, contextWindow: 8_000 }), {
    idleTimeoutMs: 0,
  });
  const system = 'You measure samples.';
  const compaction = createAutoCompaction({ model, system, keepRecent: 4, threshold: 0.8 });

  const r = run(`Measure samples 1 to ${STEPS} and report.`, {
    model: compaction.model,
    system,
    tools: [measure],
    prepareMessages: compaction.prepareMessages,
    mode: { type: 'non-interactive', autoResponse: 'allow' },
    maxSteps: STEPS + 5,
  });
  const events: RunEvent[] = [];
  for await (const event of r) events.push(event);
  const outcome = await r.outcome;

  expect(outcome.status).toBe('completed');
  expect(outcome.finalText).toBe(`All ${STEPS} samples measured; every reading was ok.`);
  const compactions = events.filter((e) => e.type === 'context.compacted');
  expect(compactions.length).toBeGreaterThan(0);
  for (const event of compactions) {
    const data = event.data as { removedMessages: number; tokensBefore: number; tokensAfter: number; summaryChars: number };
    expect(data.removedMessages).toBeGreaterThan(0);
    expect(data.tokensAfter).toBeLessThan(data.tokensBefore);
    expect(data.summaryChars).toBeGreaterThan(0);
  }
  expect(summaries.length).toBe(compactions.length);
  const last = server.lastRequest().body;
  expect(JSON.stringify(last.messages)).toContain('[Context summary]');
  expect(JSON.stringify(last.messages)).toContain(`Readings for sample ${STEPS}`);
  expect(JSON.stringify(last.system)).toContain('You measure samples.');
});
