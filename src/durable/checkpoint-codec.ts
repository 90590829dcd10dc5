import { LOOP_STATE_VERSION, type LoopState } from '../loop/index.js';
import type { Message } from '../model/types.js';
import type { ToolHistoryEntry } from '../loop/index.js';
import { CHECKPOINT_FORMAT, JsonText, type LoadedCheckpoint, type RunRecord, type StepWrite } from '../store/index.js';
import { CheckpointFormatError } from '../store/index.js';

/** What the logs already hold for a run: a step appends only what lies past these counts. */
export interface LogPosition {
  messageCount: number;
  toolHistoryCount: number;
  compactions: number;
}

/** A checkpoint and the log entries it adds, taken synchronously from the live state. */
export interface CheckpointParts {
  checkpoint: NonNullable<StepWrite['checkpoint']>;
  messages?: { from: number; items: JsonText[]; replace?: boolean };
  toolHistory?: { from: number; items: JsonText[] };
  /** The messages appended since `position` (the live objects: read them now, never keep them). */
  added: readonly Message[];
  position: LogPosition;
}

const encode = (value: unknown): JsonText => new JsonText(JSON.stringify(value));

/**
 * Splits the loop state into a small checkpoint and the log entries added since `position`. The
 * conversation and the tool history are never copied whole: only a compaction rewrites the log.
 * What is taken is encoded now, as the store will write it: the text is the snapshot (the loop
 * changes its state afterwards), with no structured clone to encode again at the write.
 */
export function splitLoopState(state: LoopState, position: LogPosition): CheckpointParts {
  const { messages, toolHistory, ...small } = state;
  const compactions = state.compactions ?? 0;
  const rewritten = compactions !== position.compactions;
  const added = rewritten ? messages : messages.length > position.messageCount ? messages.slice(position.messageCount) : [];
  const messagePart = rewritten ? { from: 0, items: added.map(encode), replace: true } : added.length ? { from: position.messageCount, items: added.map(encode) } : undefined;
  const historyPart =
    toolHistory.length > position.toolHistoryCount ? { from: position.toolHistoryCount, items: toolHistory.slice(position.toolHistoryCount).map(encode) } : undefined;
  const next = { messageCount: messages.length, toolHistoryCount: toolHistory.length, compactions };
  return {
    checkpoint: {
      format: CHECKPOINT_FORMAT,
      seq: state.lastSeq,
      step: state.step,
      state: encode(small),
      ...next,
    },
    ...(messagePart ? { messages: messagePart } : {}),
    ...(historyPart ? { toolHistory: historyPart } : {}),
    added,
    position: next,
  };
}

/**
 * Rebuilds the loop state from a stored checkpoint; the event numbering continues after `lastSeq`.
 * The checkpoint is the store's decoding for this one load (as its logs, which the state takes
 * without a copy): its small state becomes the loop state in place, with the same keys in the
 * same order as a copy would have (the logs after its own keys, `lastSeq` where it was).
 */
export function joinLoopState(runId: string, loaded: LoadedCheckpoint): LoopState {
  const small = loaded.checkpoint.state as Omit<LoopState, 'messages' | 'toolHistory'>;
  if (small.version !== LOOP_STATE_VERSION) throw new CheckpointFormatError(runId, small.version);
  const state = small as LoopState;
  state.messages = loaded.messages as Message[];
  state.toolHistory = loaded.toolHistory as ToolHistoryEntry[];
  // Events logged after the checkpoint (the ask, run.suspended) keep their seqs; new ones follow.
  state.lastSeq = Math.max(loaded.lastSeq, loaded.checkpoint.seq);
  return state;
}

/** The state of a run that never reached its first checkpoint: its task, from the top. */
export function initialLoopState(run: RunRecord, history: readonly Message[], lastSeq: number): LoopState {
  return {
    version: LOOP_STATE_VERSION,
    runId: run.id,
    task: run.task,
    messages: [...history, { role: 'user', content: run.task }],
    step: 0,
    lastSeq,
    stats: { steps: 0, toolCalls: 0, modelCalls: 0, durationMs: 0 },
    toolHistory: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    turnResults: {},
    inFlight: [],
  };
}

export function positionOf(loaded: LoadedCheckpoint | undefined): LogPosition {
  if (!loaded) return { messageCount: 0, toolHistoryCount: 0, compactions: 0 };
  return { messageCount: loaded.checkpoint.messageCount, toolHistoryCount: loaded.checkpoint.toolHistoryCount, compactions: loaded.checkpoint.compactions };
}
