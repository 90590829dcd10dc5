import { SageError } from '../errors/index.js';
import type { RunEvent } from '../events/index.js';
import type { InteractionBroker } from '../interaction/index.js';
import { completedState, STATES, type LifecycleState, type StateTransition } from './lifecycle.js';
import type { LoopState } from './loop-state.js';
import { isThenable } from './authorize.js';
import { modelTurn, PendingTurn, type AssistantTurn } from './model-turn.js';
import type { RunOptions } from './options.js';
import type { RunOutcome, RunStatus } from './outcome.js';
import { RunContext, StopSignal } from './run-context.js';
import { toolTurn } from './tool-turn.js';
import { runWorker } from './worker.js';

/**
 * A running agent. Iterate it for its events; await `outcome` for how it ended. Control it with
 * `pause()`, `resume()`, `cancel()` and `suspend()` (release it from memory; the store resumes it).
 *
 * @example
 * const r = run('fix the tests', { model, tools, mode: { type: 'non-interactive', autoResponse: 'allow' } });
 * for await (const event of r) console.log(event.type);
 * const { status, finalText } = await r.outcome;
 */
export class Run implements AsyncIterable<RunEvent> {
  readonly outcome: Promise<RunOutcome>;
  private readonly ctx: RunContext;

  constructor(task: string, options: RunOptions) {
    this.ctx = new RunContext(task, options);
    // Start on a later tick so the caller can attach to the events first.
    this.outcome = new Promise<void>((resolve) => setImmediate(resolve)).then(() => drive(this.ctx));
  }

  get id(): string {
    return this.ctx.runId;
  }

  get state(): LifecycleState {
    return this.ctx.lifecycle.state;
  }

  get history(): readonly StateTransition[] {
    return this.ctx.lifecycle.history;
  }

  /** The run's broker: answer its interactions with `broker.respond()`. */
  get broker(): InteractionBroker {
    return this.ctx.broker;
  }

  /** A snapshot of the loop state (what a checkpoint holds). */
  snapshot(): LoopState {
    return structuredClone(this.ctx.state);
  }

  [Symbol.asyncIterator](): AsyncIterator<RunEvent> {
    return this.ctx.queue[Symbol.asyncIterator]();
  }

  /** Takes effect at the next boundary: before a model call or a tool execution. */
  pause(): void {
    if (this.ctx.lifecycle.isTerminal) throw new SageError('run_finished', 'The run has finished; it cannot be paused.');
    this.ctx.requestPause();
  }

  resume(): void {
    this.ctx.requestResume();
  }

  /** Cancels the run: the model call and the running tool see the abort; pending interactions are cancelled. */
  cancel(reason = 'the run was cancelled'): void {
    this.ctx.stop({ kind: 'cancel', reason });
  }

  /** Releases the run from memory while it waits; its pending interaction stays open in the store. */
  suspend(reason = 'nobody is there to answer'): void {
    this.ctx.stop({ kind: 'suspend', reason });
  }

  /** Ends the run as failed with this error (a front end that cannot go on, e.g. no terminal to ask in). */
  fail(code: string, message: string): void {
    this.ctx.stop({ kind: 'fail', code, message });
  }

  /** Switch the permission mode during the run, when the gate supports modes. */
  setPermissionMode(mode: string): void {
    const gate = this.ctx.gate as { setMode?: (mode: string) => void };
    if (!gate.setMode) throw new SageError('unsupported', 'This run\'s permission gate has no modes.');
    gate.setMode(mode);
  }
}

/** Starts a run of `task`. See {@link Run}. */
export function run(task: string, options: RunOptions): Run {
  return new Run(task, options);
}

async function drive(ctx: RunContext): Promise<RunOutcome> {
  const timer = ctx.options.executionTimeoutMs
    ? setTimeout(() => ctx.stop({ kind: 'timeout', ms: ctx.options.executionTimeoutMs! }), ctx.options.executionTimeoutMs)
    : undefined;
  let status: RunStatus = 'completed';
  let error: RunOutcome['error'];
  let finalText = '';
  try {
    // The run's first event says what it is (a client relies on it): before any state change.
    if (ctx.options.resumeFrom) {
      ctx.emit('run.resumed', { fromSeq: ctx.options.resumeFrom.state.lastSeq });
    } else {
      ctx.emit('run.started', { task: ctx.task, mode: ctx.mode.type, model: ctx.model.id, cwd: ctx.gateContext.cwd });
    }
    ctx.enter(STATES.idle);
    ctx.throwIfStopped();
    // An external agent does the work: the same lifecycle, gate, people, events and outcome.
    // The text so far survives a stop in the middle (a cancelled or suspended run keeps it).
    const progress = { status, finalText };
    let workerText: string | undefined;
    try {
      // The loop itself is awaited here rather than through a function made for the worker's use.
      if (ctx.options.worker) {
        workerText = await runWorker(ctx, ctx.options.worker, async () => {
          await loopSteps(ctx, progress);
          return progress.finalText;
        });
      } else await loopSteps(ctx, progress);
    } finally {
      status = progress.status;
      finalText = progress.finalText;
    }
    if (workerText !== undefined) finalText = workerText;
  } catch (caught) {
    const stop = caught instanceof StopSignal ? caught.reason : ctx.stopReason;
    if (stop?.kind === 'cancel') status = 'cancelled';
    else if (stop?.kind === 'suspend') status = 'suspended';
    else if (stop?.kind === 'fail') {
      status = 'failed';
      error = { code: stop.code, message: stop.message };
    } else if (stop?.kind === 'timeout') {
      status = 'failed';
      error = { code: 'execution_timeout', message: `The run did not finish within ${Math.round(stop.ms / 1000)} s.` };
    } else {
      status = 'failed';
      error = SageError.isInstance(caught)
        ? { code: caught.code, message: caught.message }
        : { code: 'internal_error', message: caught instanceof Error ? caught.message : String(caught) };
    }
  } finally {
    if (timer) clearTimeout(timer);
  }
  return finish(ctx, status, finalText, error);
}

/** The model-and-tools loop: steps until a final answer, max steps, or the person ends it. */
async function loopSteps(ctx: RunContext, progress: { status: RunStatus; finalText: string }): Promise<void> {
  const { state } = ctx;
  // A checkpoint taken mid-turn: finish that turn's calls before calling the model again.
  const last = state.messages[state.messages.length - 1];
  if (last?.role === 'assistant' && last.toolCalls?.length) {
    await toolTurn(ctx, last.toolCalls);
    ctx.emit('step.completed', { step: state.step, toolCalls: last.toolCalls.length });
    await ctx.checkpoint();
  }
  let done = false;
  if (ctx.options.resumeFrom && last?.role === 'assistant' && !last.toolCalls?.length && ctx.mode.type === 'interactive') {
    // Suspended while waiting for the person's next message: ask again with the same id, so the
    // stored answer comes back instead of a new model call.
    progress.finalText = last.content;
    ctx.enter(STATES.processingResponse);
    const next = await askNextMessage(ctx, last.content);
    if (next === undefined) done = true;
    else {
      state.messages.push({ role: 'user', content: next });
      await ctx.checkpoint();
    }
  }
  // The clock read of the last step.completed, while nothing ran after it (see RunContext.stamp).
  let completedAt: string | undefined;
  while (!done) {
    if (state.step >= ctx.maxSteps) {
      progress.status = 'max_steps';
      break;
    }
    // boundary() and checkpoint() return a promise only when there is something to wait for.
    const paused = ctx.boundary();
    if (paused) {
      await paused;
      completedAt = undefined;
    }
    state.step++;
    state.stats.steps = state.step;
    // One clock read for step.started and the two state changes up to the model call (and the
    // step.completed before it).
    const at = completedAt ?? ctx.stamp();
    completedAt = undefined;
    ctx.emit('step.started', { step: state.step }, at);
    const modelTurned = modelTurn(ctx, at);
    let turn: AssistantTurn;
    // The clock read of message.completed, for the tool turn's first events while nothing ran since.
    let turnAt: string | undefined;
    if (modelTurned instanceof PendingTurn) {
      // The model's stream, read in this frame (see PendingTurn).
      for await (const part of modelTurned.stream) modelTurned.add(ctx, part);
      turn = modelTurned.complete(ctx);
      turnAt = turn.completedAt;
    } else if (isThenable(modelTurned)) {
      turn = await modelTurned;
    } else {
      turn = modelTurned;
      turnAt = turn.completedAt;
    }
    progress.finalText = turn.text;
    const saved = ctx.checkpoint();
    if (saved) {
      await saved;
      turnAt = undefined;
    }
    if (turn.toolCalls.length > 0) {
      await toolTurn(ctx, turn.toolCalls, turnAt);
      const at = ctx.stamp();
      ctx.emit('step.completed', { step: state.step, toolCalls: turn.toolCalls.length }, at);
      const savedTools = ctx.checkpoint();
      // No checkpoint hook ran: the next step.started follows with nothing between.
      if (savedTools) await savedTools;
      else completedAt = at;
      continue;
    }
    ctx.emit('step.completed', { step: state.step, toolCalls: 0 });
    if (ctx.mode.type !== 'interactive' || ctx.options.askForNextMessage === false) break;
    const next = await askNextMessage(ctx, turn.text);
    if (next === undefined) break;
    state.messages.push({ role: 'user', content: next });
    await ctx.checkpoint();
  }
}

/** A text-only reply in interactive mode: ask the person for the next message (empty ends the run). */
async function askNextMessage(ctx: RunContext, lastText: string): Promise<string | undefined> {
  const outcome = await ctx.interact({
    id: `${ctx.runId}:input:${ctx.state.step}`,
    kind: 'input',
    title: 'Your reply',
    description: lastText.length > 500 ? `${lastText.slice(0, 500)}…` : lastText,
    placeholder: 'Type the next message, or leave empty to finish',
    multiline: true,
    metadata: { purpose: 'next-message' },
  });
  ctx.throwIfStopped();
  ctx.enter(STATES.preparingContext);
  if (outcome.status !== 'answered') return undefined;
  const text = outcome.response.text?.trim() ?? '';
  return text === '' || text === '/exit' ? undefined : text;
}

async function finish(ctx: RunContext, status: RunStatus, finalText: string, error: RunOutcome['error']): Promise<RunOutcome> {
  const { state } = ctx;
  state.stats.durationMs = Date.now() - ctx.startedAt;
  let pendingInteractionId: string | undefined;
  if (status === 'suspended') {
    pendingInteractionId = ctx.suspendedInteractionId;
    ctx.emit('run.suspended', { reason: (ctx.stopReason as { reason: string }).reason, ...(pendingInteractionId ? { interactionId: pendingInteractionId } : {}) });
  } else if (ctx.broker.pending(ctx.runId).length > 0) {
    // Only when there is something to cancel: a run that ended with nothing open waits no tick for it.
    await ctx.broker.cancelAll(status === 'cancelled' ? 'the run was cancelled' : 'the run ended', ctx.runId);
  }
  const stats = { ...state.stats };
  try {
    if (status === 'failed') {
      ctx.emit('run.failed', error!);
      ctx.enter({ state: 'error', code: error!.code, message: error!.message });
    } else {
      if (status === 'cancelled') ctx.emit('run.cancelled', { reason: (ctx.stopReason as { reason?: string })?.reason ?? 'cancelled' });
      else if (status !== 'suspended') ctx.emit('run.completed', { status, finalText, stats });
      ctx.enter(completedState(status));
    }
  } finally {
    const closed = ctx.closeTrajectory();
    if (closed) await closed;
    ctx.queue.close();
  }
  return {
    runId: ctx.runId,
    status,
    finalText,
    messages: state.messages,
    stats,
    toolHistory: state.toolHistory,
    usage: state.usage,
    ...(error ? { error } : {}),
    ...(pendingInteractionId ? { pendingInteractionId } : {}),
  };
}
