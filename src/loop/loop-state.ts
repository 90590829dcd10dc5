import type { Message, TokenUsage, ToolImage } from '../model/types.js';
import type { RunStats, ToolHistoryEntry } from './outcome.js';

/** Bumped when LoopState changes shape; checkpoints of other versions are migrated or refused. */
export const LOOP_STATE_VERSION = 1;

/** One tool call's result as the loop keeps it; `images` only when the tool returned some (see ToolResult). */
export interface TurnResult {
  content: string;
  isError: boolean;
  images?: ToolImage[];
}

/**
 * Everything the loop needs to continue: small and JSON-serialisable. The durable store keeps it
 * per run together with the event seq it covers.
 */
export interface LoopState {
  version: typeof LOOP_STATE_VERSION;
  runId: string;
  task: string;
  messages: Message[];
  step: number;
  lastSeq: number;
  stats: Omit<RunStats, 'durationMs'> & { durationMs: number };
  toolHistory: ToolHistoryEntry[];
  usage: TokenUsage;
  /** Results of the current turn's tool calls, by call id, until the turn's results are appended in call order. */
  turnResults: Record<string, TurnResult>;
  /** Calls whose side effect started and whose result is not recorded yet. */
  inFlight: string[];
  /**
   * How many times `messages` was rewritten rather than appended to (auto-compaction). The durable
   * store appends new messages to a log; a change here tells it to rewrite the log instead.
   */
  compactions?: number;
  /** An external agent's own session (a run whose worker is Claude Code, an ACP agent…): continued by a follow-up. */
  agentSession?: { agent: string; sessionId: string };
  /** The action chain's steps (setup, cleanup) that finished: never repeated when the run resumes. */
  chainDone?: string[];
}
