import { RunCancelledError } from '../../errors/index.js';
import { ModelStreamInterruptedError } from '../errors.js';
import type { FinishReason, Model, ModelRequest, ModelStreamPart, TokenUsage } from '../types.js';
import { classifyProviderError, type ErrorContext } from './classify-error.js';
import { parseToolCall } from './parse-tool-call.js';
import type { ProviderLanguageModel, ProviderStreamPart } from './provider-types.js';
import { toProviderPrompt, toProviderTools, type ToolResultImages } from './to-provider-prompt.js';

export interface AiSdkModelOptions {
  /** Our id, `provider:name`, e.g. `anthropic:claude-sonnet-4-5`. */
  id: string;
  /** The provider's name for people, used in error messages (`Anthropic`). */
  providerName: string;
  /** The environment variable holding the key, named when the provider refuses it. */
  keyVariable?: string;
  contextWindow?: number;
  /** Caps each reply; the provider's default otherwise (Anthropic's package defaults per model). */
  maxOutputTokens?: number;
  temperature?: number;
  /**
   * How tool-result images reach this provider (see ToolResultImages): `inline` where its API takes
   * images in a tool result (Anthropic, OpenAI Responses); `user-message`, the default, for Chat
   * Completions servers, whose tool messages are text only.
   */
  toolResultImages?: ToolResultImages;
}

type ProviderFinish = Extract<ProviderStreamPart, { type: 'finish' }>;

/**
 * Adapts an AI SDK provider model to our Model contract by calling its `doStream` directly:
 * one HTTP request per call, no tool loop, no hidden retries (recovery is ours, see
 * `withRecovery`), parallel tool calls and usage exactly as the provider reported them.
 *
 * @example
 * const model = createAiSdkModel(createAnthropic({ apiKey })('claude-sonnet-4-5'), {
 *   id: 'anthropic:claude-sonnet-4-5', providerName: 'Anthropic', keyVariable: 'ANTHROPIC_API_KEY',
 * });
 */
export function createAiSdkModel(languageModel: ProviderLanguageModel, options: AiSdkModelOptions): Model {
  return new AiSdkModel(languageModel, options);
}

class AiSdkModel implements Model {
  readonly specificationVersion = 'sage.model.v1' as const;
  readonly id: string;
  readonly contextWindow?: number;

  constructor(
    private readonly languageModel: ProviderLanguageModel,
    private readonly options: AiSdkModelOptions,
  ) {
    this.id = options.id;
    this.contextWindow = options.contextWindow;
  }

  async *stream(request: ModelRequest): AsyncGenerator<ModelStreamPart> {
    const { signal } = request;
    const context: ErrorContext = { provider: this.options.providerName, keyVariable: this.options.keyVariable, deliveredOutput: false };
    const fail = (error: unknown): unknown => (signal?.aborted ? cancelled(signal) : classifyProviderError(error, context));
    if (signal?.aborted) throw cancelled(signal);

    let stream: ReadableStream<ProviderStreamPart>;
    try {
      const tools = toProviderTools(request.tools);
      ({ stream } = await this.languageModel.doStream({
        prompt: toProviderPrompt(request.system, request.messages, { toolResultImages: this.options.toolResultImages }),
        tools: tools.length > 0 ? tools : undefined,
        toolChoice: tools.length > 0 ? { type: 'auto' } : undefined,
        maxOutputTokens: this.options.maxOutputTokens,
        temperature: this.options.temperature,
        abortSignal: signal,
      }));
    } catch (error) {
      throw fail(error);
    }

    const reader = stream.getReader();
    let finish: ProviderFinish | undefined;
    try {
      for (;;) {
        let next: Awaited<ReturnType<typeof reader.read>>;
        try {
          next = await reader.read();
        } catch (error) {
          throw fail(error);
        }
        if (next.done) break;
        const part = next.value;
        switch (part.type) {
          case 'text-delta':
            if (part.delta.length === 0) break;
            context.deliveredOutput = true;
            yield { type: 'text-delta', text: part.delta };
            break;
          case 'tool-call':
            // Provider-executed tools (web search run by the provider) are not ours to run.
            if (part.providerExecuted) break;
            context.deliveredOutput = true;
            yield { type: 'tool-call', call: parseToolCall(part) };
            break;
          case 'error':
            throw fail(part.error);
          case 'finish':
            finish = part;
            break;
          default:
            // Reasoning, tool-input streaming, metadata and sources have no place in our contract.
            break;
        }
      }
    } finally {
      // Stops the HTTP response when the consumer leaves early or we throw.
      reader.cancel().catch(() => {});
    }

    if (!finish || endedWithoutCompletion(finish)) {
      throw new ModelStreamInterruptedError(context.deliveredOutput, 'the stream ended before the provider marked the reply complete', {
        provider: this.options.providerName,
      });
    }
    yield { type: 'finish', finishReason: finish.finishReason.unified as FinishReason, usage: toUsage(finish.usage) };
  }
}

/**
 * The OpenAI package always emits a `finish` when the body ends, even if `response.completed`
 * never came; then neither a raw finish reason nor usage is known. No complete reply looks like that.
 */
function endedWithoutCompletion(finish: ProviderFinish): boolean {
  return finish.finishReason.raw === undefined && finish.usage.inputTokens.total === undefined && finish.usage.outputTokens.total === undefined;
}

function toUsage(usage: ProviderFinish['usage']): TokenUsage {
  return { inputTokens: usage.inputTokens.total ?? 0, outputTokens: usage.outputTokens.total ?? 0 };
}

function cancelled(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new RunCancelledError();
}
