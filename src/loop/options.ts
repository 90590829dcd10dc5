import type { AutoResponse, InteractionBroker, InteractionResponder } from '../interaction/index.js';
import type { Model, Message } from '../model/types.js';
import type { PermissionGate } from '../permission/types.js';
import type { Tool } from '../tool/types.js';
import type { AgentRef, RunEvent } from '../events/index.js';
import type { LoopState } from './loop-state.js';
import type { RunWorker } from './worker.js';

/**
 * How a person takes part:
 * - interactive: requests go to a responder (a terminal, a page) and the run waits;
 * - non-interactive: an auto-responder answers at once (allow all, deny all, defaults, or a function);
 * - batch: nobody answers; an ask becomes a deny whose reason says so.
 */
export type RunMode =
  | { type: 'interactive'; responder?: InteractionResponder }
  | { type: 'non-interactive'; autoResponse: AutoResponse }
  | { type: 'batch' };

/** Hooks through which the durable store follows a run (see the store module). */
export interface LoopHooks {
  /** After each model turn and each tool result; the state is small and JSON-serialisable. */
  checkpoint?(state: LoopState): void | Promise<void>;
  /** Before a tool's side effect starts (durable runs record the intent); never for a read-only tool, which is simply run again after a crash. */
  toolIntent?(call: { toolCallId: string; toolName: string; input: unknown }, state: LoopState): void | Promise<void>;
}

export interface RunOptions {
  model: Model;
  tools?: readonly Tool[];
  /** Defaults to the minimal gate: read-only tools run, the rest ask. */
  gate?: PermissionGate;
  mode?: RunMode;
  /** Model turns before the run stops with status max_steps. Default 50. */
  maxSteps?: number;
  /** Wall-clock limit for the whole run, ms. */
  executionTimeoutMs?: number;
  /** How long an interaction waits for a person, ms (0: no limit). Default 0. */
  interactionTimeoutMs?: number;
  /** Write every event as a JSON line to this file. */
  trajectoryPath?: string;
  system?: string;
  cwd?: string;
  runId?: string;
  sessionId?: string;
  userId?: string;
  /** Where interactions reach people: `cli`, `web`, `slack:…`. */
  channel?: string;
  /** An outside signal that cancels the run. */
  signal?: AbortSignal;
  /** Called synchronously for every event, in order (stores, loggers). */
  onEvent?: (event: RunEvent) => void;
  /**
   * Events kept for iterating the run (`for await … of run`) while nobody iterates it yet: the
   * newest this many (between it and twice it); 0 keeps none. Default: all. A durable run keeps
   * 256 (its events are all in the store: read them there), a server's none.
   */
  unreadEventLimit?: number;
  /** Share a broker across runs (a server answering many runs); one is made per run otherwise. */
  broker?: InteractionBroker;
  hooks?: LoopHooks;
  /** Interactive mode: after a text-only reply, ask the person for the next message (default true). */
  askForNextMessage?: boolean;
  /** Continue a run from a checkpoint instead of starting from `task`. */
  resumeFrom?: {
    state: LoopState;
    interruptedCallIds?: readonly string[];
    /**
     * The state is the caller's to give away (decoded for this run and used by nothing else): the
     * run takes it as is. Otherwise it is copied first, so the caller's object is never changed.
     */
    handedOver?: boolean;
  };
  /** Earlier conversation to continue (an interactive session's next task). */
  history?: readonly Message[];
  /** This run is a subagent: its events and asks carry this, so its parent's person sees who asks. */
  agent?: AgentRef;
  /**
   * Something other than the model-and-tools loop does the run's work (an external coding agent);
   * its calls still pass this run's gate and people. See `worker.ts`.
   */
  worker?: RunWorker;
  /** Rewrites the conversation before each model call (auto-compaction). */
  prepareMessages?: (messages: Message[], signal: AbortSignal) => Promise<{ messages: Message[]; event?: { removedMessages: number; summaryChars: number; tokensBefore: number; tokensAfter: number } } | undefined>;
}
