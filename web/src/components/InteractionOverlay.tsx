import { useEffect, useRef, useState } from 'react';
import { respond } from '../api';
import type { AnswerFields, InteractionRequest } from '../types';
import { CombinedInteraction } from './CombinedInteraction';
import { ConfirmInteraction } from './ConfirmInteraction';
import { InputInteraction } from './InputInteraction';
import { QuestionsInteraction } from './QuestionsInteraction';
import { SelectInteraction } from './SelectInteraction';

export interface InteractionProps {
  request: InteractionRequest;
  busy: boolean;
  onAnswer: (answer: AnswerFields) => void;
}

/**
 * The modal for a pending request (seed 003 §7). It traps focus so the keyboard alone can answer,
 * and it closes when the run's event stream says the request ended — here or in another tab.
 */
export function InteractionOverlay({ request, more }: { request: InteractionRequest; more: number }) {
  const dialog = useRef<HTMLDivElement>(null);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  useEffect(() => {
    const first = dialog.current?.querySelector<HTMLElement>('[data-autofocus], input, textarea, select, button');
    first?.focus();
  }, [request.id]);

  const onKeyDown = (e: React.KeyboardEvent) => {
    if (e.key !== 'Tab' || !dialog.current) return;
    const focusable = [...dialog.current.querySelectorAll<HTMLElement>('input, textarea, select, button, summary, [tabindex]:not([tabindex="-1"])')].filter((el) => !el.hasAttribute('disabled'));
    if (focusable.length === 0) return;
    const first = focusable[0]!;
    const last = focusable[focusable.length - 1]!;
    if (e.shiftKey && document.activeElement === first) {
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

  const onAnswer = async (answer: AnswerFields) => {
    setBusy(true);
    setError(undefined);
    try {
      await respond(request.id, answer);
    } catch (e) {
      setError((e as Error).message);
      setBusy(false);
    }
  };

  const props: InteractionProps = { request, busy, onAnswer: (a) => void onAnswer(a) };
  const titleId = `interaction-title-${request.id}`;
  return (
    <div className="overlay">
      <div className="modal" role="dialog" aria-modal="true" aria-labelledby={titleId} ref={dialog} onKeyDown={onKeyDown} data-interaction={request.id} data-kind={request.kind}>
        <h2 id={titleId}>{request.title}</h2>
        {request.agent ? <p className="meta">Asked by the {request.agent} agent</p> : null}
        {request.description && request.kind !== 'confirm' ? <p className="description">{request.description}</p> : null}
        {request.kind === 'input' ? <InputInteraction {...props} /> : null}
        {request.kind === 'select' ? <SelectInteraction {...props} /> : null}
        {request.kind === 'confirm' ? <ConfirmInteraction {...props} /> : null}
        {request.kind === 'questions' ? <QuestionsInteraction {...props} /> : null}
        {request.kind === 'combined' ? <CombinedInteraction {...props} /> : null}
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
        {more > 0 ? <p className="meta">{more} more request(s) waiting after this one.</p> : null}
      </div>
    </div>
  );
}
