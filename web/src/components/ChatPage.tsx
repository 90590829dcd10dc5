import { useEffect, useRef, useState } from 'react';
import { api } from '../api';
import { nextMessageRequest, overlayRequests } from '../run-reducer';
import { useRun } from '../use-run';
import { ChatItemView } from './ChatItemView';
import { Composer } from './Composer';
import { InteractionOverlay } from './InteractionOverlay';
import { StatusBadge } from './StatusBadge';

/**
 * One run as a chat: the task, the assistant's streamed text, tool cards, and the overlay for
 * whatever the run waits for. Everything is derived from the event log, so a refresh (or a
 * second tab) shows the same page, pending request included.
 */
export function ChatPage({ runId }: { runId: string }) {
  const { state, stream, streamError } = useRun(runId);
  const [cancelError, setCancelError] = useState<string>();
  const bottom = useRef<HTMLDivElement>(null);
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [state.items.length]);
  const overlay = overlayRequests(state);
  const nextMessage = nextMessageRequest(state);
  const live = state.status === 'running' || state.status === 'waiting' || state.status === 'suspended';
  const task = state.items.find((i) => i.kind === 'user');

  return (
    <section className="chat" aria-busy={state.status === 'running'}>
      <header className="chat-head">
        <h1 className="chat-title">{task?.kind === 'user' ? task.text : runId}</h1>
        <StatusBadge status={state.status} />
        <span className={`stream stream-${stream}`} data-stream={stream}>
          {stream === 'live' ? 'live' : stream === 'ended' ? '' : stream === 'error' ? streamError : `${stream}…`}
        </span>
        {live ? (
          <button type="button" className="danger" onClick={() => api('POST', `/runs/${encodeURIComponent(runId)}/cancel`, {}).catch((e: Error) => setCancelError(e.message))}>
            Cancel run
          </button>
        ) : null}
      </header>
      {cancelError ? <p className="error">{cancelError}</p> : null}
      <ol className="timeline" aria-live="polite">
        {state.items.map((item) => (
          <ChatItemView key={`${item.kind}-${item.id}`} item={item} />
        ))}
      </ol>
      <div ref={bottom} />
      {nextMessage ? <Composer request={nextMessage} /> : null}
      {/* Keyed by request: a new request never inherits the last one's busy state or half-typed answer. */}
      {overlay[0] ? <InteractionOverlay key={overlay[0].id} request={overlay[0]} more={overlay.length - 1} /> : null}
    </section>
  );
}
