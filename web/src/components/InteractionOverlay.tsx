import { useEffect, useRef, useState } from 'react';
import { respond } from '../api';
import { useSendError } from '../use-send-error';
import type { AnswerFields, InteractionRequest } from '../types';
import { CombinedInteraction } from './CombinedInteraction';
import { ConfirmInteraction, isHighRisk } from './ConfirmInteraction';
import { InputInteraction } from './InputInteraction';
import { QuestionsInteraction } from './QuestionsInteraction';
import { SelectInteraction } from './SelectInteraction';

export interface InteractionProps {
  request: InteractionRequest;
  busy: boolean;
  onAnswer: (answer: AnswerFields) => void;
}

/** Sends an answer; its error (a 409 in words, an offline failure that clears itself) is shown under the form. */
function useAnswer(request: InteractionRequest, onSent?: () => void) {
  const [busy, setBusy] = useState(false);
  const { error, fail, clear } = useSendError();
  const answer = async (fields: AnswerFields) => {
    setBusy(true);
    clear();
    onSent?.();
    try {
      await respond(request.id, fields);
    } catch (e) {
      fail(e);
      setBusy(false);
    }
  };
  return { busy, error, onAnswer: (a: AnswerFields) => void answer(a) };
}

function Body({ request, busy, onAnswer }: InteractionProps) {
  const props: InteractionProps = { request, busy, onAnswer };
  return (
    <>
      {request.agent ? <p className="meta">Asked by the {typeof request.agent === 'string' ? request.agent : request.agent.type} subagent</p> : null}
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

const position = (index: number, total: number) => (total > 1 ? <span className="count">{`${index + 1} of ${total}`}</span> : null);

/**
 * A pending request inline in the timeline, right after what the agent said before the call (wide
 * screens). The page stays usable around it: Cancel run, scrolling, reading earlier output.
 */
export function InlineInteraction({ request, index, total, onSent }: { request: InteractionRequest; index: number; total: number; onSent?: () => void }) {
  const box = useRef<HTMLElement>(null);
  const { busy, error, onAnswer } = useAnswer(request, onSent);
  useEffect(() => focusFirst(box.current, request), [request.id]);
  const titleId = `interaction-title-${request.id}`;
  return (
    <li className="approval-item">
      <section className="approval" id={`approval-${request.id}`} ref={box} tabIndex={-1} aria-labelledby={titleId} data-interaction={request.id} data-kind={request.kind}>
        <h2 id={titleId}>
          {request.title} {position(index, total)}
        </h2>
        <Body request={request} busy={busy} onAnswer={onAnswer} />
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
export function InteractionOverlay({ request, index, total, context, onCancelRun, onSent }: { request: InteractionRequest; index: number; total: number; context?: string; onCancelRun?: () => void; onSent?: () => void }) {
  const dialog = useRef<HTMLDivElement>(null);
  const { busy, error, onAnswer } = useAnswer(request, onSent);
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
          <h2 id={titleId}>
            {request.title} {position(index, total)}
          </h2>
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
        <Body request={request} busy={busy} onAnswer={onAnswer} />
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
      </div>
    </div>
  );
}
