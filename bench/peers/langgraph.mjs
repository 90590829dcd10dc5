// LangGraph.js: StateGraph + ToolNode with a BaseChatModel mock, no checkpointer, one echo call per turn, then "done".
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { ToolNode, toolsCondition } from '@langchain/langgraph/prebuilt';
import { z } from 'zod';
import { decide, measure, settings, versionOf } from './harness.mjs';

const { n } = settings();
class MockChat extends BaseChatModel {
  _llmType() {
    return 'mock';
  }
  async _generate(messages) {
    let done = 0;
    for (const m of messages) if (m._getType() === 'tool') done++;
    const d = decide(done, n);
    const message = d.kind === 'call'
      ? new AIMessage({ content: '', tool_calls: [{ id: d.id, name: 'echo', args: d.input, type: 'tool_call' }] })
      : new AIMessage({ content: d.text });
    return { generations: [{ text: '', message }] };
  }
}
const model = new MockChat({});
const echo = tool(async ({ i }) => `ok ${i}`, { name: 'echo', description: 'echo', schema: z.object({ i: z.number() }) });
const app = new StateGraph(MessagesAnnotation)
  .addNode('agent', async (s) => ({ messages: [await model.invoke(s.messages)] }))
  .addNode('tools', new ToolNode([echo]))
  .addEdge(START, 'agent')
  .addConditionalEdges('agent', toolsCondition, ['tools', END])
  .addEdge('tools', 'agent')
  .compile();

await measure(
  'langgraph',
  async () => {
    const r = await app.invoke({ messages: [{ role: 'user', content: 'go' }] }, { recursionLimit: 2 * n + 10 });
    const last = r.messages[r.messages.length - 1];
    if (last.content !== 'done') throw new Error(`langgraph: unexpected final message ${JSON.stringify(last.content)}`);
    let turns = 0;
    for (const m of r.messages) if (m._getType() === 'ai') turns++;
    return turns;
  },
  { version: `@langchain/langgraph ${await versionOf('@langchain/langgraph')}, @langchain/core ${await versionOf('@langchain/core')}` },
);
