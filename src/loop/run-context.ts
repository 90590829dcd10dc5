import { isoNow, lastClockMs } from '../interaction/iso-time.js';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname } from 'node:path';
import type { RunEvent, RunEventData, RunEventType } from '../events/index.js';
import {
  batchResponder,
  type BrokerEvent,
  createAutoResponder,
  InteractionBroker,
  type InteractionDraft,
  type InteractionOutcome,
  type InteractionResponder,
  type StopSource,
} from '../interaction/index.js';
import { withFields } from '../interaction/with-fields.js';
import { minimalGate } from '../permission/minimal-gate.js';
import type { GateContext, PermissionGate } from '../permission/types.js';
import { ToolRegistry } from '../tool/registry.js';
import type { Model, ToolSpec } from '../model/types.js';
import { toolSpecs } from './tool-specs.js';
import { EventQueue } from './event-queue.js';
import { Lifecycle, STATES, type LifecycleState } from './lifecycle.js';
import { LOOP_STATE_VERSION, type LoopState } from './loop-state.js';
import type { RunMode, RunOptions } from './options.js';

/** Why the loop's signal was aborted: a cancel, the execution timeout, or a suspension. */
export type StopReason =
  | { kind: 'cancel'; reason: string }
  | { kind: 'timeout'; ms: number }
  | { kind: 'suspend'; reason: string }
  | { kind: 'fail'; code: string; message: string };

/**
 * The live state of one run, shared by the loop's step functions: options, conversation, lifecycle,
 * events, the broker, the abort signal and pause control.
 */
export class RunContext {
  readonly runId: string;
  readonly model: Model;
  readonly registry: ToolRegistry;
  readonly gate: PermissionGate;
  readonly mode: RunMode;
  readonly maxSteps: number;
  readonly interactionTimeoutMs: number;
  readonly broker: InteractionBroker;
  readonly gateContext: GateContext;
  readonly controller = new AbortController();
  readonly queue: EventQueue<RunEvent>;
  readonly lifecycle: Lifecycle;
  readonly state: LoopState;
  readonly runState = new Map<string, unknown>();
  readonly startedAt = Date.now();
  stopReason: StopReason | undefined;
  private stopSignal: StopSignal | undefined;
  /** The interaction a suspended run waits for. */
  suspendedInteractionId: string | undefined;
  private waiting = 0;
  private beforeWaiting: LifecycleState | undefined;
  private pauseRequested = false;
  private resumeWaiter: (() => void) | undefined;
  private trajectory: WriteStream | undefined;
  /** The tool specs of the last model call, for as many tools as `specsFor` (see toolSpecs). */
  private specs: ToolSpec[] | undefined;
  private specsFor = -1;

  constructor(
    readonly task: string,
    readonly options: RunOptions,
  ) {
    this.runId = options.resumeFrom?.state.runId ?? options.runId ?? `run_${randomUUID()}`;
    this.model = options.model;
    this.registry = new ToolRegistry(options.tools ?? [], options.cwd ?? process.cwd());
    this.gate = options.gate ?? minimalGate;
    this.mode = options.mode ?? { type: 'interactive' };
    this.maxSteps = options.maxSteps ?? 50;
    this.queue = new EventQueue<RunEvent>(options.unreadEventLimit);
    this.interactionTimeoutMs = options.interactionTimeoutMs ?? 0;
    this.broker = options.broker ?? new InteractionBroker();
    this.attachResponder();
    this.gateContext = {
      runId: this.runId,
      sessionId: options.sessionId ?? this.runId,
      userId: options.userId ?? 'local',
      channel: options.channel ?? 'sdk',
      cwd: options.cwd ?? process.cwd(),
      signal: this.controller.signal,
    };
    // The event carries the transition's own timestamp (one clock read for both).
    this.lifecycle = new Lifecycle((t, change) => this.emit('state.changed', change, t.at));
    // A state handed over is not copied: the copy grows with the conversation, on every resume.
    const resume = options.resumeFrom;
    this.state = resume ? (resume.handedOver ? resume.state : structuredClone(resume.state)) : this.freshState();
    if (options.trajectoryPath) {
      mkdirSync(dirname(options.trajectoryPath), { recursive: true });
      this.trajectory = createWriteStream(options.trajectoryPath, { flags: 'a' });
      // A file that cannot be opened or written (a folder, no permission, a full disk) must not
      // crash the process with an unhandled 'error' after the run's work is done: the trajectory
      // is a copy of the events, so writing stops and the run goes on. (The CLI checks the path
      // up front, so a person hears about it before the run starts.)
      this.trajectory.on('error', () => {
        this.trajectory = undefined;
      });
    }
    if (options.signal) {
      if (options.signal.aborted) this.stop({ kind: 'cancel', reason: 'the run was cancelled before it started' });
      else options.signal.addEventListener('abort', () => this.stop({ kind: 'cancel', reason: 'the run was cancelled' }), { once: true });
    }
  }

  /** The run's abort signal (read once: the AbortController getter is slow on a hot path). */
  readonly signal: AbortSignal = this.controller.signal;

  /** The run's stop as its asks listen for it, without an AbortSignal listener each (see RunStop). */
  readonly stopSource = new RunStop();

  private freshState(): LoopState {
    const messages = [...(this.options.history ?? [])];
    messages.push({ role: 'user', content: this.task });
    return {
      version: LOOP_STATE_VERSION,
      runId: this.runId,
      task: this.task,
      messages,
      step: 0,
      lastSeq: 0,
      stats: { steps: 0, toolCalls: 0, modelCalls: 0, durationMs: 0 },
      toolHistory: [],
      usage: { inputTokens: 0, outputTokens: 0 },
      turnResults: {},
      inFlight: [],
    };
  }

  private attachResponder(): void {
    let responder: InteractionResponder | undefined;
    if (this.mode.type === 'batch') responder = batchResponder;
    else if (this.mode.type === 'non-interactive') responder = createAutoResponder(this.mode.autoResponse);
    else responder = this.mode.responder;
    if (responder && !this.options.broker) this.broker.responder = responder;
    const forward = this.broker.onEvent;
    // A local first, not `this.broker.onEvent = (event) => …`: V8 pretenures a function literal
    // assigned straight to a property (old generation), and this one holds the run (`this`) through
    // every scavenge after the run is gone, until the next full GC (see InteractionBroker.open).
    const onEvent = (event: BrokerEvent) => {
      forward?.(event);
      if (event.type === 'interaction.requested' ? event.data.request.runId === this.runId : this.broker.get(event.data.interactionId)?.request.runId === this.runId) {
        this.emit(event.type, event.data as never);
      }
    };
    this.broker.onEvent = onEvent;
  }

  emit<T extends RunEventType>(type: T, data: RunEventData<T>, at: string = isoNow()): void {
    // A subagent's events say so; an event relayed from its own subagent keeps that one's name.
    const agent = this.options.agent;
    const stamped = agent && !(data as { agent?: unknown }).agent ? { ...data, agent } : data;
    const event = { seq: ++this.state.lastSeq, runId: this.runId, type, at, data: stamped } as RunEvent;
    this.options.onEvent?.(event);
    this.trajectory?.write(`${JSON.stringify(event)}\n`);
    this.queue.push(event);
  }

  /** A subagent's event, re-emitted in this run's stream (made once: every tool context shares it). */
  readonly relayEvent = (event: RunEvent): void => this.emit(event.type, event.data as never, event.at);

  /** A subagent's token usage, counted in this run's. */
  readonly addUsage = (usage: { inputTokens: number; outputTokens: number }): void => {
    this.state.usage.inputTokens += usage.inputTokens;
    this.state.usage.outputTokens += usage.outputTokens;
  };

  /** What the model is told about the tools, made again only when a tool was added since. */
  toolSpecs(): ToolSpec[] {
    if (this.specs === undefined || this.specsFor !== this.registry.size) {
      this.specs = toolSpecs(this.registry);
      this.specsFor = this.registry.size;
    }
    return this.specs;
  }

  enter(state: LifecycleState, at?: string): void {
    this.lifecycle.enter(state, at);
  }

  /**
   * One clock read for events the loop emits back to back with none of the caller's code between
   * them (step.started and the two state changes after it, a state change and the event it leads
   * to): they are microseconds apart, and a clock read costs ~0.1 µs on a small machine where a
   * step emits 11 events. Undefined when an `onEvent` listener runs between the events (it may take
   * its time): each event then reads the clock itself.
   */
  stamp(): string | undefined {
    return this.options.onEvent ? undefined : isoNow();
  }

  /** Aborts the run's signal once; the first reason wins. */
  stop(reason: StopReason): void {
    if (this.stopReason) return;
    this.stopReason = reason;
    if (reason.kind === 'suspend') this.suspendedInteractionId = this.broker.pending(this.runId)[0]?.id;
    this.resumeWaiter?.();
    this.stopSource.aborted = true;
    this.stopSource.reason = reason;
    this.controller.abort(reason);
    this.stopSource.notify();
  }

  throwIfStopped(): void {
    // One signal per stop: the loop may check again while it unwinds (a tool's result, the ask).
    if (this.stopReason) throw (this.stopSignal ??= new StopSignal(this.stopReason));
  }

  /** Asks a person through the broker, moving the lifecycle to waiting_for_input meanwhile. */
  async interact(draft: InteractionDraft, timeoutMs = this.interactionTimeoutMs): Promise<InteractionOutcome> {
    if (this.waiting++ === 0) {
      this.beforeWaiting = this.lifecycle.state;
      this.enter(STATES.waitingForInput);
    }
    try {
      const asked = this.options.agent ? (withFields(draft, { agent: this.options.agent }) as InteractionDraft) : draft;
      return await this.broker.open(asked, { runId: this.runId, signal: this.stopSource, timeoutMs });
    } finally {
      if (--this.waiting === 0 && !this.stopReason && !this.lifecycle.isTerminal) this.enter(this.beforeWaiting ?? STATES.executingTools);
    }
  }

  requestPause(): void {
    this.pauseRequested = true;
  }

  requestResume(): void {
    this.pauseRequested = false;
    this.resumeWaiter?.();
  }

  /**
   * A boundary where a pause takes effect: before each model call and each tool execution. Returns a
   * promise only while paused, so the common path allocates nothing.
   */
  boundary(): Promise<void> | void {
    this.throwIfStopped();
    if (!this.pauseRequested) return;
    return this.waitWhilePaused();
  }

  private async waitWhilePaused(): Promise<void> {
    const before = this.lifecycle.state;
    this.enter(STATES.paused);
    await new Promise<void>((resolve) => {
      this.resumeWaiter = resolve;
      if (!this.pauseRequested || this.stopReason) resolve();
    });
    this.resumeWaiter = undefined;
    this.throwIfStopped();
    this.enter(before);
  }

  /** Calls the checkpoint hook; returns a promise only when there is one. */
  checkpoint(): Promise<void> | void {
    if (this.options.hooks?.checkpoint) {
      this.state.stats.durationMs = Date.now() - this.startedAt;
      return this.callCheckpointHook();
    }
    // Only `snapshot()` sees it: the clock read of the event just emitted is recent enough.
    this.state.stats.durationMs = lastClockMs() - this.startedAt;
  }

  private async callCheckpointHook(): Promise<void> {
    await this.options.hooks?.checkpoint?.(this.state);
  }

  /** Ends the trajectory file; a promise only when there is one to close. */
  closeTrajectory(): Promise<void> | undefined {
    const stream = this.trajectory;
    if (!stream) return undefined;
    return new Promise((resolve) => stream.end(resolve));
  }
}

/**
 * Thrown inside the loop to unwind when the run's signal is aborted. A control-flow signal the loop's
 * driver catches, never reported: it captures no stack trace (capturing one through the loop's async
 * frames was ~20 µs of every suspension in a profile of bench/durable.ts).
 */
export class StopSignal extends Error {
  readonly reason: StopReason;

  constructor(reason: StopReason) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(reason.kind);
    } finally {
      Error.stackTraceLimit = limit;
    }
    this.reason = reason;
  }
}

/**
 * A run's stop, as the broker listens for it while the run asks (the ask is cancelled, or detached
 * on a suspension): the part of an AbortSignal the broker uses. Adding and removing a listener on an
 * AbortSignal, and dispatching the abort Event to it, cost ~9 µs per approval cycle in a profile of
 * bench/durable.ts; here they are an array's. Its listeners are told once each, in the order they
 * came, right after the run's AbortSignal has told its own.
 */
export class RunStop implements StopSource {
  aborted = false;
  reason: StopReason | undefined;
  private readonly listeners: (() => void)[] = [];

  addEventListener(_type: 'abort', listener: () => void): void {
    this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const i = this.listeners.indexOf(listener);
    if (i >= 0) this.listeners.splice(i, 1);
  }

  /** Tells the listeners (one removed by another meanwhile is not told); a throw is reported as an AbortSignal's listener's is. */
  notify(): void {
    const listeners = this.listeners;
    while (listeners.length > 0) {
      const listener = listeners.shift()!;
      try {
        listener();
      } catch (error) {
        process.nextTick(() => {
          throw error;
        });
      }
    }
  }
}
