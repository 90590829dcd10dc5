import type { RunWrite, StepWrite, Store } from '../../store/index.js';

/** The store methods whose commits can be durable boundaries of a run. */
export const BOUNDARY_METHODS = ['write', 'saveInteraction', 'claimAnswer', 'claimRun', 'closeInteraction', 'closeRunInteractions'] as const;

/**
 * Boundaries of a run's durable state, by what the commit holds: a tool intent, a tool result, a
 * checkpoint after a model turn or an answer (mid-turn included), a request committed, an answer
 * claimed, the run claimed, its status written (suspended, finished). A step's checkpoint and
 * results ride with the run's next commit, so one commit can be several kinds (`intent+result`).
 * Event-only flushes are not boundaries.
 */
export function boundaryKind(name: string, arg: unknown, options?: unknown, result?: unknown): string | undefined {
  const kinds: string[] = [];
  const step = name === 'write' ? (arg as RunWrite) : name === 'saveInteraction' ? (options as { step?: StepWrite } | undefined)?.step : undefined;
  if (name === 'write') {
    const w = arg as RunWrite;
    // An answer to a released run: the run claimed and the answer recorded with the resumed loop's first write.
    if (w.claim) kinds.push('answer', 'claim');
    if (w.toolIntent) kinds.push('intent');
    if (w.run) kinds.push('status');
    if (w.interruptedToolCalls) kinds.push('interrupted');
    // A run released at its ask commits the request with its suspension.
    if (w.asks?.length) kinds.push('ask');
  } else {
    const kind = ({ saveInteraction: 'ask', claimAnswer: 'answer', claimRun: 'claim' } as Record<string, string>)[name];
    if (kind) kinds.push(kind);
    // An answer to a released run claims it in the same commit.
    if (name === 'claimAnswer' && (result as { claimedRun?: unknown } | undefined)?.claimedRun) kinds.push('claim');
  }
  if (step?.consumeInteractions?.length) kinds.push('consumed');
  if (step?.toolResults?.length) kinds.push('result');
  else if (step?.checkpoint) kinds.push('checkpoint');
  return kinds.length ? kinds.join('+') : undefined;
}

/** The run a call of a boundary method is about (read from the store for an interaction id). */
export async function runOf(store: Store, name: string, arg: unknown): Promise<string | undefined> {
  switch (name) {
    case 'write':
      return (arg as RunWrite).runId;
    case 'saveInteraction':
      return (arg as { runId: string }).runId;
    case 'claimRun':
    case 'closeRunInteractions':
      return arg as string;
    case 'claimAnswer':
    case 'closeInteraction':
      return (await store.getInteraction(arg as string))?.runId;
    default:
      return undefined;
  }
}
