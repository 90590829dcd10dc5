import type { JSONSchema7 } from 'ai';
import type { Message, ToolSpec } from '../types.js';
import type { ProviderFunctionTool, ProviderMessage, ProviderPrompt } from './provider-types.js';

type ProviderAssistantContent = Extract<ProviderMessage, { role: 'assistant' }>['content'];
type ProviderToolContent = Extract<ProviderMessage, { role: 'tool' }>['content'];

/**
 * Our plain-JSON conversation → the AI SDK's provider prompt. The system prompt and the leading
 * system messages become one system message; a system message later in the conversation (a
 * reminder the loop inserted) becomes a user message marked as such, because Anthropic accepts
 * system text only at the start. Consecutive tool results are grouped into one tool message.
 */
export function toProviderPrompt(system: string | undefined, messages: readonly Message[]): ProviderPrompt {
  const prompt: ProviderPrompt = [];
  const leadingSystem: string[] = system ? [system] : [];
  let index = 0;
  while (index < messages.length && messages[index]!.role === 'system') {
    leadingSystem.push(messages[index]!.content);
    index++;
  }
  if (leadingSystem.length > 0) prompt.push({ role: 'system', content: leadingSystem.join('\n\n') });

  for (; index < messages.length; index++) {
    const message = messages[index]!;
    switch (message.role) {
      case 'system':
        prompt.push({ role: 'user', content: [{ type: 'text', text: `[System note] ${message.content}` }] });
        break;
      case 'user':
        prompt.push({ role: 'user', content: [{ type: 'text', text: message.content }] });
        break;
      case 'assistant': {
        const content: ProviderAssistantContent = [];
        if (message.content.length > 0) content.push({ type: 'text', text: message.content });
        for (const call of message.toolCalls ?? []) {
          content.push({ type: 'tool-call', toolCallId: call.id, toolName: call.name, input: toolInputForProvider(call.input) });
        }
        // An empty assistant turn carries nothing, and Anthropic refuses empty content.
        if (content.length > 0) prompt.push({ role: 'assistant', content });
        break;
      }
      case 'tool': {
        const part: ProviderToolContent[number] = {
          type: 'tool-result',
          toolCallId: message.toolCallId,
          toolName: message.toolName,
          output: message.isError ? { type: 'error-text', value: message.content } : { type: 'text', value: message.content },
        };
        const previous = prompt[prompt.length - 1];
        if (previous?.role === 'tool') previous.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  return prompt;
}

/**
 * Every provider takes tool input as a JSON object. A call whose arguments were malformed keeps
 * the raw text in `input` (so people can see it); the provider gets `{}` and the model learns
 * what went wrong from the error tool result that answers the call.
 */
function toolInputForProvider(input: unknown): unknown {
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
}

export function toProviderTools(tools: readonly ToolSpec[]): ProviderFunctionTool[] {
  return tools.map((tool) => ({
    type: 'function',
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as JSONSchema7,
  }));
}
