import type { Message, Model, ToolSpec } from '../model/types.js';
import { ContextCompactionError } from './errors.js';
import { CHARS_PER_TOKEN, estimateConversationTokens, type LastCallUsage } from './estimate-tokens.js';
import { splitHistory } from './split-history.js';
import { renderTranscript, SUMMARY_SYSTEM_PROMPT, summaryMessage, summaryRequestText } from './summary-prompt.js';

/** The data of a `context.compacted` event. */
export interface CompactionStats {
  removedMessages: number;
  summaryChars: number;
  tokensBefore: number;
  tokensAfter: number;
}

export interface CompactionOptions {
  /** Writes the summary; usually the run's own model. Called with no tools. */
  model: Model;
  contextWindow: number;
  /** Fraction of the window past which the conversation is compacted. Default 0.8. */
  threshold?: number;
  /** Most recent messages kept verbatim (extended to keep tool calls with their results). Default 6. */
  keepRecent?: number;
  /** Counted in the estimate: the request carries them too. */
  system?: string;
  tools?: readonly ToolSpec[];
  /** The provider's usage for the last call, when known; better than the estimate. */
  lastCall?: LastCallUsage;
  signal?: AbortSignal;
}

export type CompactionResult =
  | { compacted: false; messages: Message[]; tokens: number; reason: 'below_threshold' | 'nothing_to_compact' }
  | { compacted: true; messages: Message[]; stats: CompactionStats };

/**
 * Compacts when the conversation passes `threshold` of the window: the older turns are replaced
 * by a summary the model writes, while the system messages, the `keepRecent` latest messages and
 * every unresolved tool call stay as they are.
 *
 * @example
 * const result = await compactIfNeeded(messages, { model, contextWindow: 200_000, threshold: 0.8, keepRecent: 6 });
 * if (result.compacted) emit('context.compacted', result.stats);
 */
export async function compactIfNeeded(messages: readonly Message[], options: CompactionOptions): Promise<CompactionResult> {
  const tokens = estimateConversationTokens(messages, options);
  if (tokens <= (options.threshold ?? 0.8) * options.contextWindow) {
    return { compacted: false, messages: [...messages], tokens, reason: 'below_threshold' };
  }
  return compactMessages(messages, options, tokens);
}

/** Compacts now, whatever the size (a `/compact` command); `tokensBefore` is estimated when not given. */
export async function compactMessages(messages: readonly Message[], options: CompactionOptions, tokensBefore?: number): Promise<CompactionResult> {
  const before = tokensBefore ?? estimateConversationTokens(messages, options);
  const { head, older, recent } = splitHistory(messages, options.keepRecent ?? 6);
  if (older.length === 0) return { compacted: false, messages: [...messages], tokens: before, reason: 'nothing_to_compact' };

  // The summary request must itself fit: give the transcript at most half the window.
  const transcript = renderTranscript(older, Math.floor(options.contextWindow * CHARS_PER_TOKEN * 0.5));
  const summary = await summarise(options.model, transcript, options.signal);
  const next = [...head, summaryMessage(summary, older.length), ...recent];
  return {
    compacted: true,
    messages: next,
    stats: {
      removedMessages: older.length,
      summaryChars: summary.length,
      tokensBefore: before,
      tokensAfter: estimateConversationTokens(next, { system: options.system, tools: options.tools }),
    },
  };
}

async function summarise(model: Model, transcript: string, signal: AbortSignal | undefined): Promise<string> {
  let text = '';
  let finished = false;
  try {
    for await (const part of model.stream({
      system: SUMMARY_SYSTEM_PROMPT,
      messages: [{ role: 'user', content: summaryRequestText(transcript) }],
      tools: [],
      signal,
    })) {
      if (part.type === 'text-delta') text += part.text;
      else if (part.type === 'finish') finished = true;
    }
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ContextCompactionError(`The model could not summarise the conversation: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const summary = text.trim();
  if (!finished || summary === '') throw new ContextCompactionError('The model returned no summary; the conversation was not compacted.');
  return summary;
}
