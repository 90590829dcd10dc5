import { useState } from 'react';
import { respond } from '../api';
import type { InteractionRequest } from '../types';
import { useSendError } from '../use-send-error';

/** The chat box: answers the run's "next message" request; Finish (an empty answer) ends the run. */
export function Composer({ request, onSent }: { request: InteractionRequest; onSent?: () => void }) {
  const [text, setText] = useState('');
  const { error, fail, clear } = useSendError();
  const [busy, setBusy] = useState(false);
  const send = async (value: string) => {
    setBusy(true);
    clear();
    onSent?.();
    try {
      await respond(request.id, { kind: 'input', text: value });
      setText('');
    } catch (e) {
      fail(e);
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
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </form>
  );
}
