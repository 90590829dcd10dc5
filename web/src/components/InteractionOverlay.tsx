import { useEffect, useRef, useState } from 'react';
import { respond } from '../api';
import { describeKeptAnswer, keptAnswers, storeFaultOf, useStoreFault } from '../store-fault';
import { useSendError } from '../use-send-error';
import type { AnswerFields, InteractionRequest } from '../types';
import { AskContextLine, useAskContext } from './AskContextLine';
import { CombinedInteraction } from './CombinedInteraction';
import { ConfirmInteraction, isHighRisk } from './ConfirmInteraction';
import { InputInteraction } from './InputInteraction';
import { QuestionsInteraction } from './QuestionsInteraction';
import { SelectInteraction } from './SelectInteraction';
import { StoreFaultBanner } from './StoreFaultBanner';

export interface InteractionProps {
  request: InteractionRequest;
  busy: boolean;
  onAnswer: (answer: AnswerFields) => void;
  /** An answer the store refused, kept to be sent again: the card shows it as it was given. */
  kept?: AnswerFields;
}

/**
 * Sends an answer; its error (a 409 in words, an offline failure that clears itself) is shown under
 * the form. An answer the store refused (503 store_unavailable / disk_full) is kept, with a banner
 * that sends it again, until a send succeeds or fails for another reason.
 */
function useAnswer(request: InteractionRequest, onSent?: () => void) {
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useSendError();
  const [kept, setKept] = useState(() => keptAnswers.get(request.id));
  const store = useStoreFault(kept?.code);
  const answer = async (fields: AnswerFields) => {
    setBusy(true);
    clear();
    onSent?.();
    try {
      await respond(request.id, fields);
      keptAnswers.delete(request.id);
      store.clear();
    } catch (e) {
      const code = storeFaultOf(e);
      if (code) {
        keptAnswers.set(request.id, fields, code);
        setKept({ answer: fields, code });
        store.failed(code);
      } else {
        keptAnswers.delete(request.id);
        setKept(undefined);
        store.clear();
        fail(e);
      }
      setBusy(false);
    }
  };
  const banner =
    store.fault && kept ? <StoreFaultBanner fault={store.fault} what="answer" summary={describeKeptAnswer(kept.answer)} busy={busy} onSendAgain={() => void answer(kept.answer)} /> : null;
  return { busy, error, banner, kept: kept?.answer, onAnswer: (a: AnswerFields) => void answer(a) };
}

function Body({ request, busy, onAnswer, kept }: InteractionProps) {
  const props: InteractionProps = { request, busy, onAnswer, kept };
  const context = useAskContext(request.id);
  return (
    <>
      {context ? <AskContextLine context={context} /> : request.agent ? <p className="meta">Asked by the {typeof request.agent === 'string' ? request.agent : request.agent.type} subagent</p> : null}
      {request.description && request.kind !== 'confirm' ? <p className="description">{request.description}</p> : null}
      {request.kind === 'input' ? <InputInteraction {...props} /> : null}
      {request.kind === 'select' ? <SelectInteraction {...props} /> : null}
      {request.kind === 'confirm' ? <ConfirmInteraction {...props} /> : null}
      {request.kind === 'questions' ? <QuestionsInteraction {...props} /> : null}
      {request.kind === 'combined' ? <CombinedInteraction {...props} /> : null}
    </>
  );
}

/** Focus the first answer on arrival, except a high-risk confirm: then the card itself, so Enter approves nothing. */
function focusFirst(box: HTMLElement | null, request: InteractionRequest): void {
  if (!box) return;
  const high = request.kind === 'confirm' && isHighRisk(request);
  const first = high ? box.querySelector<HTMLElement>('.confirm') : box.querySelector<HTMLElement>('[data-autofocus], input, textarea, select');
  (first ?? box).focus({ preventScroll: false });
}

/** What one pending request is about, for the picker: its title, and the command or file of a tool call. */
function pickLabel(request: InteractionRequest): string {
  const input = request.kind === 'confirm' && typeof request.input === 'object' && request.input !== null ? (request.input as Record<string, unknown>) : {};
  const what = typeof input['command'] === 'string' ? input['command'] : typeof input['file_path'] === 'string' ? input['file_path'] : '';
  const text = what ? `${request.title} ${what}` : request.title;
  return text.length > 60 ? `${text.slice(0, 59)}…` : text;
}

/**
 * "1 of N" as a picker: any pending request can be answered first, not only the oldest one
 * (a quick question need not wait behind a diff that takes a while to read).
 */
function Position({ pending, index, onPick }: { pending: InteractionRequest[]; index: number; onPick?: (id: string) => void }) {
  if (pending.length < 2) return null;
  const current = pending[index] ?? pending[0]!;
  const id = `pick-${current.id}`;
  return (
    <span className="count pending-pick">
      <label htmlFor={id} className="visually-hidden">
        Pending request to answer
      </label>
      <select id={id} value={current.id} onChange={(e) => onPick?.(e.target.value)}>
        {pending.map((r, i) => (
          <option key={r.id} value={r.id}>
            {`${i + 1} of ${pending.length}: ${pickLabel(r)}`}
          </option>
        ))}
      </select>
    </span>
  );
}

/**
 * A pending request inline in the timeline, right after what the agent said before the call (wide
 * screens). The page stays usable around it: Cancel run, scrolling, reading earlier output.
 */
export function InlineInteraction({ request, index, pending, onPick, onSent }: { request: InteractionRequest; index: number; pending: InteractionRequest[]; onPick?: (id: string) => void; onSent?: () => void }) {
  const box = useRef<HTMLElement>(null);
  const { busy, error, banner, kept, onAnswer } = useAnswer(request, onSent);
  useEffect(() => focusFirst(box.current, request), [request.id]);
  const titleId = `interaction-title-${request.id}`;
  return (
    <li className="approval-item">
      <section className="approval" id={`approval-${request.id}`} ref={box} tabIndex={-1} aria-labelledby={titleId} data-interaction={request.id} data-kind={request.kind}>
        <div className="modal-head">
          <h2 id={titleId}>{request.title}</h2>
          <Position pending={pending} index={index} onPick={onPick} />
        </div>
        {banner}
        <Body request={request} busy={busy} onAnswer={onAnswer} kept={kept} />
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
      </section>
    </li>
  );
}

/**
 * The modal for a pending request on a small screen: a bottom sheet that traps focus (the page
 * behind is inert), shows what the agent said just before the call, and carries its own
 * "Cancel run", so the overlay never blocks cancelling.
 */
export function InteractionOverlay({ request, index, pending, onPick, context, onCancelRun, onSent }: { request: InteractionRequest; index: number; pending: InteractionRequest[]; onPick?: (id: string) => void; context?: string; onCancelRun?: () => void; onSent?: () => void }) {
  const dialog = useRef<HTMLDivElement>(null);
  const { busy, error, banner, kept, onAnswer } = useAnswer(request, onSent);
  useEffect(() => focusFirst(dialog.current, request), [request.id]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key !== 'Tab' || !dialog.current) return;
    const focusable = [...dialog.current.querySelectorAll<HTMLElement>('input, textarea, select, button, summary, [tabindex]:not([tabindex="-1"])')].filter((el) => !el.hasAttribute('disabled'));
    if (focusable.length === 0) return;
    const first = focusable[0]!;
    const last = focusable[focusable.length - 1]!;
    if (e.shiftKey && (document.activeElement === first || document.activeElement === dialog.current)) {
      e.preventDefault();
      last.focus();
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault();
      first.focus();
    } else {
      // Radio groups and buttons that are still disabled can make the browser's own Tab step
      // out of the dialog; bring focus back in, so the keyboard never gets lost behind it.
      const box = dialog.current;
      setTimeout(() => {
        if (!box.contains(document.activeElement)) (e.shiftKey ? last : first).focus();
      }, 0);
    }
  };

  const titleId = `interaction-title-${request.id}`;
  return (
    <div className="overlay">
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby={titleId} tabIndex={-1} ref={dialog} onKeyDown={onKeyDown} data-interaction={request.id} data-kind={request.kind}>
        <div className="modal-head">
          <h2 id={titleId}>{request.title}</h2>
          <Position pending={pending} index={index} onPick={onPick} />
          {onCancelRun ? (
            <button type="button" className="link danger-link" onClick={onCancelRun}>
              Cancel run
            </button>
          ) : null}
        </div>
        {context ? (
          <blockquote className="agent-context" aria-label="What the agent said before this">
            {context}
          </blockquote>
        ) : null}
        {banner}
        <Body request={request} busy={busy} onAnswer={onAnswer} kept={kept} />
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
