import type { Message, TokenUsage } from '../model/types.js';
import type { PermissionDecision } from '../permission/types.js';

export type RunStatus = 'completed' | 'cancelled' | 'max_steps' | 'failed' | 'suspended';

export interface RunStats {
  steps: number;
  toolCalls: number;
  modelCalls: number;
  durationMs: number;
}

/** One tool call as it went: what was asked, what the gate decided, what came back. */
export interface ToolHistoryEntry {
  toolCallId: string;
  name: string;
  input: unknown;
  decision: Pick<PermissionDecision, 'behavior' | 'reason' | 'source' | 'rule'> & { answeredBy?: string };
  /** An external agent ran this call on its own: the gate never decided it (see WorkerContext.toolFinished). */
  ungated?: true;
  result: { content: string; isError: boolean };
  durationMs: number;
}

/** How a run ended. */
export interface RunOutcome {
  runId: string;
  status: RunStatus;
  finalText: string;
  messages: Message[];
  stats: RunStats;
  toolHistory: ToolHistoryEntry[];
  usage: TokenUsage;
  /** Set when status is failed. */
  error?: { code: string; message: string };
  /** Set when status is suspended: the interaction the run waits for. */
  pendingInteractionId?: string;
}
