// OpenAI Agents SDK: Runner.run with a custom Model, tracing disabled, one echo call per turn, then "done".
import { Agent, Runner, Usage, setTracingDisabled, tool } from '@openai/agents';
import { z } from 'zod';
import { decide, measure, settings, versionOf } from './harness.mjs';

setTracingDisabled(true);
const { n } = settings();
let modelCalls = 0;
class MockModel {
  async getResponse(req) {
    modelCalls++;
    const items = Array.isArray(req.input) ? req.input : [];
    let done = 0;
    for (const item of items) if (item.type === 'function_call_result') done++;
    const usage = new Usage({ requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 });
    const d = decide(done, n);
    return d.kind === 'call'
      ? { usage, output: [{ type: 'function_call', id: `fc_${done}`, callId: d.id, name: 'echo', arguments: JSON.stringify(d.input), status: 'completed' }] }
      : { usage, output: [{ type: 'message', id: 'm', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: d.text }] }] };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse() {
    throw new Error('unused');
  }
}
const echo = tool({ name: 'echo', description: 'echo', parameters: z.object({ i: z.number() }), execute: async ({ i }) => `ok ${i}` });
const agent = new Agent({ name: 'bench', instructions: 'x', model: new MockModel(), tools: [echo] });
const runner = new Runner({ tracingDisabled: true });

await measure(
  'openai-agents',
  async () => {
    const before = modelCalls;
    const r = await runner.run(agent, 'go', { maxTurns: n + 2 });
    if (r.finalOutput !== 'done') throw new Error(`openai-agents: unexpected final output ${JSON.stringify(r.finalOutput)}`);
    return modelCalls - before;
  },
  { version: `@openai/agents ${await versionOf('@openai/agents')}` },
);
