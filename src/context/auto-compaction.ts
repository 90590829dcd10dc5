import type { Message, Model, ToolSpec } from '../model/types.js';
import { compactIfNeeded, type CompactionStats } from './compact.js';
import type { LastCallUsage } from './estimate-tokens.js';

/** Used when neither the options nor the model know the window: small enough for most local servers. */
export const FALLBACK_CONTEXT_WINDOW = 32_768;

export interface AutoCompactionOptions {
  /** The run's model; its calls are observed to learn the real token usage. */
  model: Model;
  /** Writes the summaries; the run's model by default. */
  summaryModel?: Model;
  /** Defaults to the model's window, then to `FALLBACK_CONTEXT_WINDOW`. */
  contextWindow?: number;
  threshold?: number;
  keepRecent?: number;
  system?: string;
  tools?: readonly ToolSpec[];
}

export interface AutoCompaction {
  /** Use this model for the run: the same model, reporting each call's usage to the compactor. */
  model: Model;
  /** The loop's `prepareMessages` hook: compacts when needed and says what it did. */
  prepareMessages(messages: Message[], signal: AbortSignal): Promise<{ messages: Message[]; event?: CompactionStats } | undefined>;
}

/**
 * Auto-compaction for the loop: pass `model` and `prepareMessages` to `run()`. Before each model
 * call the conversation is measured — with the provider's reported usage when the history is the
 * one that usage was measured on, else by estimate — and compacted past the threshold.
 *
 * @example
 * const compaction = createAutoCompaction({ model, system, tools: registry.specs() });
 * run({ ...options, model: compaction.model, prepareMessages: compaction.prepareMessages });
 */
export function createAutoCompaction(options: AutoCompactionOptions): AutoCompaction {
  let lastCall: LastCallUsage | undefined;
  const inner = options.model;
  const model: Model = {
    specificationVersion: 'sage.model.v1',
    id: inner.id,
    contextWindow: inner.contextWindow,
    async *stream(request) {
      for await (const part of inner.stream(request)) {
        if (part.type === 'finish') {
          lastCall = { usage: part.usage, messageCount: request.messages.length + 1, anchor: request.messages[request.messages.length - 1] };
        }
        yield part;
      }
    },
  };
  return {
    model,
    async prepareMessages(messages, signal) {
      const result = await compactIfNeeded(messages, {
        model: options.summaryModel ?? inner,
        contextWindow: options.contextWindow ?? inner.contextWindow ?? FALLBACK_CONTEXT_WINDOW,
        threshold: options.threshold,
        keepRecent: options.keepRecent,
        system: options.system,
        tools: options.tools,
        lastCall,
        signal,
      });
      if (!result.compacted) return undefined;
      lastCall = undefined;
      return { messages: result.messages, event: result.stats };
    },
  };
}
