import type { InteractionResponder } from '../interaction/index.js';
import type { RunOptions } from '../loop/index.js';
import type { Model } from '../model/types.js';
import type { PermissionGate } from '../permission/types.js';
import type { RunRecord } from '../store/index.js';
import type { Tool } from '../tool/types.js';
import type { DurableRunner } from './durable-runner.js';

/**
 * How a process builds the parts of a run that cannot be stored: the CLI and the server each
 * provide one. A resumed run is rebuilt from its record with the same factory.
 */
export interface DurableRuntime {
  /** Turns the stored model spec back into a model. */
  createModel(spec: string, run: RunRecord): Model | Promise<Model>;
  /**
   * The tools a run may call (the same set it started with, so resumed calls find their tool). The
   * runner that drives the run is passed along: a Task tool starts its subagents' runs with it.
   */
  tools: readonly Tool[] | ((run: RunRecord, runner: DurableRunner) => readonly Tool[] | Promise<readonly Tool[]>);
  /** The run's permission gate; default the minimal gate. */
  createGate?(run: RunRecord): PermissionGate | Promise<PermissionGate>;
  /** Where this process shows interactive asks (a terminal), when anyone is there. */
  createResponder?(run: RunRecord): InteractionResponder | undefined;
  /**
   * What the loop gets besides the stored options, built after the model: the system prompt when
   * none is stored, auto-compaction (a wrapped model and `prepareMessages`), whether the run asks
   * for a next message, and a listener of this process (a terminal renderer) after the store's.
   */
  loopExtras?(run: RunRecord, model: Model): LoopExtras | Promise<LoopExtras>;
}

export interface LoopExtras {
  model?: Model;
  system?: string;
  prepareMessages?: RunOptions['prepareMessages'];
  askForNextMessage?: boolean;
  trajectoryPath?: string;
  onEvent?: RunOptions['onEvent'];
  /** The run is a subagent: its events and asks carry this. */
  agent?: RunOptions['agent'];
  /** An external agent (or the action chain) does the run's work instead of the loop's own steps. */
  worker?: RunOptions['worker'];
  /**
   * Keep the run in this process while it waits for a person, whatever the idle release says: its
   * work cannot be stored and rebuilt (an external agent's process would be killed by a release).
   */
  holdWhileWaiting?: boolean;
}
