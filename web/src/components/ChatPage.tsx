import { useEffect, useLayoutEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { api } from '../api';
import { nextMessageRequest, overlayRequests, type ChatItem } from '../run-reducer';
import { useMedia } from '../use-media';
import { useRun } from '../use-run';
import { ChatItemView } from './ChatItemView';
import { Composer } from './Composer';
import { InlineInteraction, InteractionOverlay } from './InteractionOverlay';
import { StatusBadge } from './StatusBadge';

/** Below this width a pending request is a bottom sheet; above it, it sits in the timeline. */
const SMALL = '(max-width: 700px)';

/**
 * One run as a chat: the task, the assistant's streamed text, tool cards, and whatever the run waits
 * for. On a wide screen a pending request sits in the timeline right after the call it is about
 * (with a sticky bar when it is scrolled away); on a phone it is a bottom sheet. Everything is
 * derived from the event log, so a refresh (or a second tab) shows the same page.
 */
export function ChatPage({ runId }: { runId: string }) {
  const { state, stream, streamError } = useRun(runId);
  const [cancelError, setCancelError] = useState<string>();
  const small = useMedia(SMALL);
  const bottom = useRef<HTMLDivElement>(null);
  const section = useRef<HTMLElement>(null);
  const approvals = overlayRequests(state);
  // The request being answered: the oldest, unless the person picked another from "1 of N".
  const [picked, setPicked] = useState<string>();
  const first = approvals.find((a) => a.id === picked) ?? approvals[0];
  const firstIndex = first ? approvals.indexOf(first) : 0;
  const nextMessage = nextMessageRequest(state);
  const live = state.status === 'running' || state.status === 'waiting' || state.status === 'idle' || state.status === 'suspended';
  const task = state.items.find((i) => i.kind === 'user');
  const last = state.items[state.items.length - 1];
  const { announcement, markSent } = useAnnouncements(state.items, stream);
  const offScreen = useOffScreen(first && !small ? `approval-${first.id}` : undefined);

  // Follow the conversation only while the reader is at its end: someone who scrolled up to read
  // earlier output is not pulled down by every streamed word.
  const following = useRef(true);
  useEffect(() => {
    const onScroll = () => (following.current = window.innerHeight + window.scrollY >= document.documentElement.scrollHeight - 160);
    window.addEventListener('scroll', onScroll, { passive: true });
    return () => window.removeEventListener('scroll', onScroll);
  }, []);
  // The sentinel sits after the reply box, so scrolling to it never leaves the newest message under it.
  useLayoutEffect(() => {
    if (following.current) bottom.current?.scrollIntoView({ block: 'end' });
  }, [state.items.length, nextMessage?.id, first?.id, last?.kind === 'assistant' ? last.text.length : 0]);

  // After an answer, focus goes to the next request (it focuses itself) or to the reply box,
  // never to <body>.
  const hadApprovals = useRef(false);
  useEffect(() => {
    if (first) {
      hadApprovals.current = true;
      return;
    }
    if (!hadApprovals.current) return;
    const lost = document.activeElement === document.body || document.activeElement === null;
    if (!lost && !section.current?.contains(document.activeElement)) return;
    const composer = document.getElementById('composer-text');
    if (composer) {
      composer.focus();
      hadApprovals.current = false;
    } else if (lost) section.current?.focus();
  }, [first?.id, nextMessage?.id]);

  // The bottom sheet is modal: the page behind it (navigation included) is inert.
  const sheet = small && first !== undefined;
  useEffect(() => {
    const root = document.getElementById('root');
    if (!root || !sheet) return;
    root.inert = true;
    return () => {
      root.inert = false;
    };
  }, [sheet]);

  const cancelRun = () => {
    api('POST', `/runs/${encodeURIComponent(runId)}/cancel`, {}).catch((e: Error) => setCancelError(e.message));
  };

  // The inline request goes right after the tool card it is about, else at the end.
  const anchor = first?.toolCallId && state.items.some((i) => i.kind === 'tool' && i.id === first.toolCallId) ? first.toolCallId : undefined;
  const inline = first && !small ? <InlineInteraction key={`approval-${first.id}`} request={first} index={firstIndex} pending={approvals} onPick={setPicked} onSent={markSent} /> : null;

  return (
    <section className="chat" aria-busy={state.status === 'running'} ref={section} tabIndex={-1} aria-label="Run">
      <header className="chat-head">
        <h1 className="chat-title">{task?.kind === 'user' ? task.text : runId}</h1>
        <StatusBadge status={state.status} />
        <span className={`stream stream-${stream}`} data-stream={stream}>
          {stream === 'live' ? 'live' : stream === 'ended' ? '' : stream === 'error' ? streamError : `${stream}…`}
        </span>
        {live ? (
          <button type="button" className="danger" onClick={cancelRun}>
            Cancel run
          </button>
        ) : null}
      </header>
      {cancelError ? <p className="error">{cancelError}</p> : null}
      {inline && offScreen ? (
        <div className="approval-bar" role="status" data-testid="approval-bar">
          <span>
            Waiting for you: <strong>{first!.title}</strong>
            {approvals.length > 1 ? ` (${firstIndex + 1} of ${approvals.length})` : null}
          </span>
          <button
            type="button"
            className="primary"
            onClick={() => {
              const el = document.getElementById(`approval-${first!.id}`);
              el?.scrollIntoView({ block: 'center' });
              // The confirm box carries the y/n/number keys; other requests take focus on their first field.
              const target = el?.querySelector<HTMLElement>('.confirm') ?? el?.querySelector<HTMLElement>('input, textarea, select') ?? el;
              target?.focus({ preventScroll: true });
            }}
          >
            Show
          </button>
        </div>
      ) : null}
      {/* Not a live region: only new messages are announced (below), not the whole timeline. */}
      <ol className="timeline">
        {state.items.map((item) => (
          <ItemWithApproval key={`${item.kind}-${item.id}`} item={item} after={anchor === item.id ? inline : null} />
        ))}
        {inline && !anchor ? inline : null}
      </ol>
      <div className="visually-hidden" aria-live="polite" aria-atomic="true">
        {announcement}
      </div>
      {nextMessage ? <Composer request={nextMessage} onSent={markSent} /> : null}
      <div ref={bottom} className="chat-end" />
      {sheet
        ? createPortal(
            <InteractionOverlay key={first.id} request={first} index={firstIndex} pending={approvals} onPick={setPicked} onSent={markSent} context={contextBefore(state.items, first.toolCallId)} onCancelRun={live ? cancelRun : undefined} />,
            document.body,
          )
        : null}
    </section>
  );
}

function ItemWithApproval({ item, after }: { item: ChatItem; after: React.ReactNode }) {
  return (
    <>
      <ChatItemView item={item} />
      {after}
    </>
  );
}

/** What the agent said right before the call a request is about (shown in the phone sheet). */
function contextBefore(items: ChatItem[], toolCallId: string | undefined): string | undefined {
  const at = toolCallId ? items.findIndex((i) => i.kind === 'tool' && i.id === toolCallId) : items.length;
  for (let i = (at < 0 ? items.length : at) - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === 'assistant') return item.text;
    if (item.kind === 'user') return undefined;
  }
  return undefined;
}

/** Whether the element with this id is out of the viewport. */
function useOffScreen(id: string | undefined): boolean {
  const [off, setOff] = useState(false);
  useEffect(() => {
    setOff(false);
    if (!id) return;
    const el = document.getElementById(id);
    if (!el) return;
    const observer = new IntersectionObserver(([entry]) => setOff(!entry!.isIntersecting));
    observer.observe(el);
    return () => observer.disconnect();
  }, [id]);
  return off;
}

/**
 * The text for the live region: the newest finished assistant message or notice, once the replay
 * of the log is over. The replay arrives as one burst, so it is taken as over after a quiet 400 ms,
 * or as soon as the person sends something from this page (whatever follows is an answer to it).
 */
function useAnnouncements(items: ChatItem[], stream: string): { announcement: string; markSent: () => void } {
  const baseline = useRef<number | undefined>(undefined);
  const latest = useRef(items.length);
  latest.current = items.length;
  const [text, setText] = useState('');
  const count = items.length;
  useEffect(() => {
    if (baseline.current !== undefined || stream !== 'live') return;
    const timer = setTimeout(() => (baseline.current ??= count), 400);
    return () => clearTimeout(timer);
  }, [count, stream]);
  useEffect(() => {
    if (baseline.current === undefined) return;
    for (let i = items.length - 1; i >= baseline.current; i--) {
      const item = items[i]!;
      if (item.kind === 'assistant' && !item.streaming) return setText(item.text);
      if (item.kind === 'notice') return setText(item.text);
    }
  }, [items]);
  return { announcement: text, markSent: () => (baseline.current ??= latest.current) };
}
