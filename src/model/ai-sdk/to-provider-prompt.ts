import type { JSONSchema7 } from 'ai';
import type { Message, ToolSpec } from '../types.js';
import type { ProviderFunctionTool, ProviderMessage, ProviderPrompt } from './provider-types.js';

type ProviderAssistantContent = Extract<ProviderMessage, { role: 'assistant' }>['content'];
type ProviderToolContent = Extract<ProviderMessage, { role: 'tool' }>['content'];

/**
 * How a provider is sent the images of a tool result. `inline`: inside the tool result, the
 * provider's own format (Anthropic: `tool_result` content blocks `{type:'image', source:{type:'base64'}}`;
 * OpenAI Responses: `function_call_output` whose output holds `input_image` items). `user-message`:
 * for Chat Completions APIs, whose tool messages take text only (the AI SDK would JSON-encode the
 * base64 into that text): the tool message says the images follow, and a user message right after
 * the turn's tool messages carries them as `image_url` parts.
 */
export type ToolResultImages = 'inline' | 'user-message';

export interface ProviderPromptOptions {
  toolResultImages?: ToolResultImages;
}

type ToolMessage = Extract<Message, { role: 'tool' }>;
type ProviderUserContent = Extract<ProviderMessage, { role: 'user' }>['content'];

/**
 * Our plain-JSON conversation → the AI SDK's provider prompt. The system prompt and the leading
 * system messages become one system message; a system message later in the conversation (a
 * reminder the loop inserted) becomes a user message marked as such, because Anthropic accepts
 * system text only at the start. Consecutive tool results are grouped into one tool message.
 */
export function toProviderPrompt(system: string | undefined, messages: readonly Message[], options: ProviderPromptOptions = {}): ProviderPrompt {
  const imagesInline = (options.toolResultImages ?? 'user-message') === 'inline';
  const prompt: ProviderPrompt = [];
  const leadingSystem: string[] = system ? [system] : [];
  let index = 0;
  while (index < messages.length && messages[index]!.role === 'system') {
    leadingSystem.push(messages[index]!.content);
    index++;
  }
  if (leadingSystem.length > 0) prompt.push({ role: 'system', content: leadingSystem.join('\n\n') });

  // Images of the current run of tool messages, sent as one user message after them (`user-message` mode).
  let pendingImages: ProviderUserContent = [];
  const flushImages = (): void => {
    if (pendingImages.length === 0) return;
    prompt.push({ role: 'user', content: pendingImages });
    pendingImages = [];
  };

  for (; index < messages.length; index++) {
    const message = messages[index]!;
    if (message.role !== 'tool') flushImages();
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
          output: toolOutput(message, imagesInline, pendingImages),
        };
        const previous = prompt[prompt.length - 1];
        if (previous?.role === 'tool') previous.content.push(part);
        else prompt.push({ role: 'tool', content: [part] });
        break;
      }
    }
  }
  flushImages();
  return prompt;
}

/** A tool message as the provider's tool output; in `user-message` mode its images are added to `pendingImages`. */
function toolOutput(message: ToolMessage, imagesInline: boolean, pendingImages: ProviderUserContent): Extract<ProviderToolContent[number], { type: 'tool-result' }>['output'] {
  if (message.isError) return { type: 'error-text', value: message.content };
  const images = message.images ?? [];
  if (images.length === 0) return { type: 'text', value: message.content };
  if (imagesInline) {
    return {
      type: 'content',
      value: [
        ...(message.content.length > 0 ? [{ type: 'text' as const, text: message.content }] : []),
        ...images.map((image) => ({ type: 'image-data' as const, data: image.data, mediaType: image.mediaType })),
      ],
    };
  }
  const count = images.length === 1 ? 'The image' : `The ${images.length} images`;
  pendingImages.push(
    { type: 'text', text: `[${count} returned by ${message.toolName} (call ${message.toolCallId}):]` },
    ...images.map((image) => ({ type: 'file' as const, data: image.data, mediaType: image.mediaType })),
  );
  return { type: 'text', value: `${message.content}\n[${count} of this result ${images.length === 1 ? 'is' : 'are'} in the next user message.]` };
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
