import { useState } from 'react';
import { respond } from '../api';
import { describeKeptAnswer, keptAnswers, storeFaultOf, useStoreFault } from '../store-fault';
import type { InteractionRequest } from '../types';
import { useSendError } from '../use-send-error';
import { StoreFaultBanner } from './StoreFaultBanner';

/**
 * The chat box: answers the run's "next message" request; Finish (an empty answer) ends the run.
 * A message the store refused stays in the box, with a banner that sends it again.
 */
export function Composer({ request, onSent }: { request: InteractionRequest; onSent?: () => void }) {
  const [kept, setKept] = useState(() => keptAnswers.get(request.id));
  const [text, setText] = useState(() => kept?.answer.text ?? '');
  const { error, fail, clear } = useSendError();
  const store = useStoreFault(kept?.code);
  const [busy, setBusy] = useState(false);
  const send = async (value: string) => {
    setBusy(true);
    clear();
    onSent?.();
    try {
      await respond(request.id, { kind: 'input', text: value });
      keptAnswers.delete(request.id);
      store.clear();
      setText('');
    } catch (e) {
      const code = storeFaultOf(e);
      if (code) {
        keptAnswers.set(request.id, { kind: 'input', text: value }, code);
        setKept({ answer: { kind: 'input', text: value }, code });
        store.failed(code);
      } else {
        keptAnswers.delete(request.id);
        store.clear();
        fail(e);
      }
    } finally {
      setBusy(false);
    }
  };
  return (
    <form
      className="composer"
      onSubmit={(e) => {
        e.preventDefault();
        if (text.trim()) void send(text);
      }}
    >
      <label htmlFor="composer-text" className="visually-hidden">
        Your reply
      </label>
      <textarea
        id="composer-text"
        rows={2}
        value={text}
        placeholder="Reply to the agent (Enter sends, Shift+Enter for a new line)"
        onChange={(e) => setText(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey) {
            e.preventDefault();
            if (text.trim()) void send(text);
          }
        }}
      />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy || !text.trim()}>
          Send
        </button>
        <button type="button" disabled={busy} onClick={() => void send('')}>
          Finish
        </button>
      </div>
      {store.fault && kept ? (
        <StoreFaultBanner fault={store.fault} what="message" summary={kept.answer.text ? describeKeptAnswer(kept.answer) : 'finish the conversation'} busy={busy} onSendAgain={() => void send(kept.answer.text ?? '')} />
      ) : null}
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
