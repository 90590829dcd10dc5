import type { InteractionRequest, RunEvent } from './types';

export interface ToolCard {
  kind: 'tool';
  id: string;
  name: string;
  input: unknown;
  decision?: { behavior: 'allow' | 'deny' | 'ask'; reason: string; rule?: string; source: string };
  result?: {
    content: string;
    isError: boolean;
    durationMs: number;
    /** When the agent got the output cut: where the whole text is and how long it is. */
    whole?: { url: string; chars: number };
  };
  running: boolean;
  /** AskUserQuestion: the person's answers, keyed by question (from the interaction's answer). */
  answers?: Record<string, string | string[]>;
}

export type ChatItem =
  | { kind: 'user'; id: string; text: string }
  | { kind: 'assistant'; id: string; text: string; streaming: boolean }
  | ToolCard
  | { kind: 'notice'; id: string; text: string; tone: 'info' | 'error' };

/** What the chat page shows, folded from the run's events in seq order. */
export interface RunViewState {
  items: ChatItem[];
  pending: InteractionRequest[];
  /** `idle`: it answered and waits only for the next message; `waiting`: for an approval or a question. */
  status: 'running' | 'waiting' | 'idle' | 'completed' | 'failed' | 'cancelled' | 'suspended';
  lastSeq: number;
}

export const initialRunState: RunViewState = { items: [], pending: [], status: 'running', lastSeq: 0 };

function isNextMessage(request: InteractionRequest): boolean {
  return request.kind === 'input' && request.metadata?.['purpose'] === 'next-message';
}

export function nextMessageRequest(state: RunViewState): InteractionRequest | undefined {
  return state.pending.find(isNextMessage);
}

/** Requests shown in the overlay (everything but the chat box's next-message request). */
export function overlayRequests(state: RunViewState): InteractionRequest[] {
  return state.pending.filter((r) => !isNextMessage(r));
}

export function reduceRun(state: RunViewState, event: RunEvent): RunViewState {
  if (event.seq <= state.lastSeq) return state;
  const items = [...state.items];
  let pending = state.pending;
  let status = state.status;
  const updateTool = (id: string, patch: Partial<ToolCard>) => {
    const i = items.findIndex((it) => it.kind === 'tool' && it.id === id);
    if (i >= 0) items[i] = { ...(items[i] as ToolCard), ...patch };
  };
  switch (event.type) {
    case 'run.started':
      items.push({ kind: 'user', id: `task-${event.seq}`, text: event.data.task });
      break;
    case 'message.delta': {
      const last = items[items.length - 1];
      if (last?.kind === 'assistant' && last.streaming) items[items.length - 1] = { ...last, text: last.text + event.data.text };
      else items.push({ kind: 'assistant', id: `a-${event.seq}`, text: event.data.text, streaming: true });
      break;
    }
    case 'message.completed': {
      const last = items[items.length - 1];
      if (last?.kind === 'assistant' && last.streaming) items[items.length - 1] = { ...last, text: event.data.text, streaming: false };
      else if (event.data.text) items.push({ kind: 'assistant', id: `a-${event.seq}`, text: event.data.text, streaming: false });
      break;
    }
    case 'tool.requested':
      // A resumed run asks about the calls of its interrupted turn again: same call, same card.
      if (items.some((it) => it.kind === 'tool' && it.id === event.data.toolCallId)) updateTool(event.data.toolCallId, { input: event.data.input });
      else items.push({ kind: 'tool', id: event.data.toolCallId, name: event.data.toolName, input: event.data.input, running: false });
      break;
    case 'permission.decided':
      updateTool(event.data.toolCallId, { decision: { behavior: event.data.behavior, reason: event.data.reason, rule: event.data.rule, source: event.data.source } });
      break;
    case 'tool.started':
      updateTool(event.data.toolCallId, { running: true, input: event.data.input });
      break;
    case 'tool.completed':
      updateTool(event.data.toolCallId, {
        running: false,
        result: {
          content: event.data.content,
          isError: event.data.isError,
          durationMs: event.data.durationMs,
          ...(event.data.fullContentChars !== undefined
            ? { whole: { url: `/runs/${encodeURIComponent(event.runId)}/tool-calls/${encodeURIComponent(event.data.toolCallId)}/output`, chars: event.data.fullContentChars } }
            : {}),
        },
      });
      break;
    case 'interaction.requested': {
      const request = event.data.request as unknown as InteractionRequest;
      if (!pending.some((p) => p.id === request.id)) pending = [...pending, request];
      break;
    }
    case 'interaction.answered': {
      const request = pending.find((p) => p.id === event.data.interactionId);
      pending = pending.filter((p) => p.id !== event.data.interactionId);
      const text = (event.data.response as { text?: unknown }).text;
      if (request && isNextMessage(request) && typeof text === 'string' && text.trim() !== '') items.push({ kind: 'user', id: `m-${event.seq}`, text });
      const answers = (event.data.response as { answers?: unknown }).answers;
      if (request?.toolCallId && answers && typeof answers === 'object') updateTool(request.toolCallId, { answers: answers as Record<string, string | string[]> });
      break;
    }
    case 'interaction.expired':
    case 'interaction.cancelled':
      pending = pending.filter((p) => p.id !== event.data.interactionId);
      if (event.type === 'interaction.expired') items.push({ kind: 'notice', id: `n-${event.seq}`, text: `A request expired: ${event.data.reason}`, tone: 'info' });
      break;
    case 'run.completed':
      status = 'completed';
      items.push({ kind: 'notice', id: `n-${event.seq}`, text: `Run ${event.data.status === 'max_steps' ? 'stopped at its step limit' : 'completed'}.`, tone: 'info' });
      break;
    case 'run.failed':
      status = 'failed';
      items.push({ kind: 'notice', id: `n-${event.seq}`, text: `Run failed: ${event.data.message}`, tone: 'error' });
      break;
    case 'run.cancelled':
      status = 'cancelled';
      items.push({ kind: 'notice', id: `n-${event.seq}`, text: `Run cancelled: ${event.data.reason}`, tone: 'info' });
      break;
    case 'run.suspended':
      status = 'suspended';
      break;
    case 'run.resumed':
      status = 'running';
      break;
    default:
      break;
  }
  if (status === 'running' || status === 'waiting' || status === 'idle' || status === 'suspended') {
    const asks = pending.filter((r) => !isNextMessage(r));
    // Only the next-message ask open (in memory or released): the run is done with its task, idle.
    if (pending.length > 0 && asks.length === 0) status = 'idle';
    else if (status !== 'suspended') status = asks.length > 0 ? 'waiting' : 'running';
  }
  return { items, pending, status, lastSeq: event.seq };
}
