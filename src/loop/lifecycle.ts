import { isoNow } from '../interaction/iso-time.js';
import { InvalidTransitionError } from '../errors/index.js';

/** The states of a run, with the phase while executing. */
export type ExecutionPhase = 'preparing_context' | 'calling_model' | 'processing_response' | 'executing_tools';
export type LifecycleState =
  | { state: 'initializing' }
  | { state: 'idle' }
  | { state: 'executing'; phase: ExecutionPhase }
  | { state: 'waiting_for_input' }
  | { state: 'paused' }
  | { state: 'completed'; reason: CompletionReason }
  | { state: 'error'; code: string; message: string };

export type CompletionReason = 'completed' | 'cancelled' | 'max_steps' | 'suspended';
export type StateName = LifecycleState['state'];

/** Which states each state may move to. Terminal states move nowhere. */
const allowed: Record<StateName, readonly StateName[]> = {
  initializing: ['idle', 'error', 'completed'],
  idle: ['executing', 'paused', 'completed', 'error'],
  executing: ['executing', 'waiting_for_input', 'paused', 'idle', 'completed', 'error'],
  waiting_for_input: ['executing', 'paused', 'completed', 'error'],
  paused: ['executing', 'waiting_for_input', 'idle', 'completed', 'error'],
  completed: [],
  error: [],
};

export interface StateTransition {
  from: LifecycleState;
  to: LifecycleState;
  at: string;
}

export function canTransition(from: LifecycleState, to: LifecycleState): boolean {
  if (!allowed[from.state].includes(to.state)) return false;
  // Moving to the same phase is not a transition; it would only add noise to the history.
  if (from.state === 'executing' && to.state === 'executing') return from.phase !== to.phase;
  return true;
}

/**
 * The lifecycle manager: validates every transition (an invalid one throws, it is never ignored),
 * keeps the history with timestamps, and reports each change to a listener.
 */
export class Lifecycle {
  private current: LifecycleState = STATES.initializing;
  readonly history: StateTransition[] = [];

  /** `onChange` also gets the change in its event form (`state.changed` data), shared and frozen. */
  constructor(private readonly onChange?: (transition: StateTransition, change: StateChange) => void) {}

  get state(): LifecycleState {
    return this.current;
  }

  get isTerminal(): boolean {
    return this.current.state === 'completed' || this.current.state === 'error';
  }

  /** `at`: the time to record (ISO-8601), when the caller read the clock for an event it emits with this change. */
  transition(to: LifecycleState, at: string = isoNow()): void {
    const from = this.current;
    const change = allowedChange(from, to);
    if (!change) throw new InvalidTransitionError(describe(from), describe(to));
    const transition: StateTransition = { from, to, at };
    this.history.push(transition);
    this.current = to;
    this.onChange?.(transition, change);
  }

  /** Moves to `to` unless already there (e.g. the same executing phase). */
  enter(to: LifecycleState, at?: string): void {
    const from = this.current;
    if (from.state === to.state && (from.state !== 'executing' || (to as { phase: string }).phase === from.phase)) return;
    this.transition(to, at);
  }
}

export function describe(state: LifecycleState): string {
  return state.state === 'executing' ? `executing(${state.phase})` : state.state;
}

/**
 * The states the loop enters on every step, made once: entering a state allocates nothing, and the
 * history shares them. Frozen, since every run shares them.
 */
export const STATES = Object.freeze({
  initializing: Object.freeze({ state: 'initializing' }),
  idle: Object.freeze({ state: 'idle' }),
  waitingForInput: Object.freeze({ state: 'waiting_for_input' }),
  paused: Object.freeze({ state: 'paused' }),
  preparingContext: Object.freeze({ state: 'executing', phase: 'preparing_context' }),
  callingModel: Object.freeze({ state: 'executing', phase: 'calling_model' }),
  processingResponse: Object.freeze({ state: 'executing', phase: 'processing_response' }),
  executingTools: Object.freeze({ state: 'executing', phase: 'executing_tools' }),
} satisfies Record<string, LifecycleState>);

/**
 * The state a run ends in, by its status (all but failed), made once like STATES: a state made per
 * run also made its own entries in the `allowedChange` cache below, on every run.
 */
const completedStates = Object.freeze({
  completed: Object.freeze({ state: 'completed', reason: 'completed' }),
  cancelled: Object.freeze({ state: 'completed', reason: 'cancelled' }),
  max_steps: Object.freeze({ state: 'completed', reason: 'max_steps' }),
  suspended: Object.freeze({ state: 'completed', reason: 'suspended' }),
} satisfies Record<CompletionReason, LifecycleState>);

export function completedState(reason: CompletionReason): LifecycleState {
  return completedStates[reason];
}

export type StateInfo = Readonly<{ state: string; phase?: string }>;

/**
 * The event form of every state, made once (frozen: events of every run share them). Keyed by state
 * then phase: both are string literals, so the lookups hash nothing new.
 */
const infos = new Map<string, Map<string | undefined, StateInfo>>();

function infoOf(state: string, phase?: string): StateInfo {
  let byPhase = infos.get(state);
  if (!byPhase) {
    byPhase = new Map();
    infos.set(state, byPhase);
  }
  let info = byPhase.get(phase);
  if (!info) {
    info = Object.freeze(phase === undefined ? { state } : { state, phase });
    byPhase.set(phase, info);
  }
  return info;
}

/** The event form of a state: `{ state, phase? }`. The same (frozen) object for the same state. */
export function stateInfo(state: LifecycleState): StateInfo {
  if (state.state === 'executing') return infoOf(state.state, state.phase);
  if (state.state === 'completed') return infoOf(state.state, state.reason);
  return infoOf(state.state);
}

/** The data of a `state.changed` event. */
export type StateChange = Readonly<{ from: StateInfo; to: StateInfo }>;

/**
 * Made once per pair of states and shared (frozen) by every run's events, like the infos in it: the
 * loop changes state four times a step, and these were four objects a step. Keyed by the state
 * objects themselves (the shared STATES on the step path, so two lookups by identity); a terminal
 * state made on the spot only keys an entry that goes with it. Only allowed pairs are kept, so a
 * pair found here needs no check of the transition table again.
 */
const changes = new WeakMap<LifecycleState, WeakMap<LifecycleState, StateChange>>();

/** The data of the `state.changed` event from `from` to `to`, or undefined when that transition is not allowed. */
export function allowedChange(from: LifecycleState, to: LifecycleState): StateChange | undefined {
  let byTo = changes.get(from);
  if (!byTo) {
    byTo = new WeakMap();
    changes.set(from, byTo);
  }
  let change = byTo.get(to);
  if (!change) {
    if (!canTransition(from, to)) return undefined;
    change = Object.freeze({ from: stateInfo(from), to: stateInfo(to) });
    byTo.set(to, change);
  }
  return change;
}
