/**
 * The Model contract. Adapters (the AI SDK providers, the scripted model) implement it; the loop
 * only sees this. Messages are plain JSON so a checkpoint can hold them as they are.
 */

export interface ToolCall {
  id: string;
  name: string;
  input: unknown;
  /** Set by an adapter when the model's arguments were not valid JSON: the loop answers with an error result. */
  inputError?: string;
}

/**
 * An image a tool returned for the model to look at: base64 bytes (no `data:` prefix) and their
 * IANA media type. Kept in the tool message so a checkpointed conversation shows it again.
 */
export interface ToolImage {
  mediaType: string;
  data: string;
}

export type Message =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string; toolCalls?: ToolCall[] }
  /**
   * `content` is the text the model reads; `images` (when the tool returned any) are shown with it
   * in the provider's format for tool results. `content` names each image, so a model that is not
   * sent the images (the scripted model; an error result) still learns what came back.
   */
  | { role: 'tool'; toolCallId: string; toolName: string; content: string; isError?: boolean; images?: ToolImage[] };

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/** What the model is told about a tool: JSON Schema derived from the tool's zod schema. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
}

export interface ModelRequest {
  system?: string;
  messages: readonly Message[];
  tools: readonly ToolSpec[];
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'tool-calls' | 'length' | 'content-filter' | 'error' | 'other';

export type ModelStreamPart =
  | { type: 'text-delta'; text: string }
  | { type: 'tool-call'; call: ToolCall }
  | { type: 'finish'; finishReason: FinishReason; usage: TokenUsage };

export interface Model {
  readonly specificationVersion: 'sage.model.v1';
  /** `provider:name`, e.g. `scripted:demo.json`, `anthropic:claude-sonnet-4-5`. */
  readonly id: string;
  /** The model's context window in tokens, when known (for auto-compaction). */
  readonly contextWindow?: number;
  stream(request: ModelRequest): AsyncIterable<ModelStreamPart>;
}
