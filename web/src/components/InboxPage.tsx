import { useState } from 'react';
import { api, ApiError, respond } from '../api';
import { describe, loadPending } from '../inbox-items';
import { relativeTime } from '../relative-time';
import { describeKeptAnswer, keptAnswers, storeFaultOf, useStoreFault } from '../store-fault';
import { useLive } from '../use-poll';
import type { AnswerFields, InteractionView } from '../types';
import { AlertSettings } from './AlertSettings';
import { AskContextLine } from './AskContextLine';
import { StoreFaultBanner } from './StoreFaultBanner';

/** The work queue: every request across the caller's runs that waits for a person, answered in place. */
export function InboxPage() {
  const inbox = useLive(() => loadPending(api), [], (e) => e.type === 'interaction');
  const items = inbox.data ?? [];
  return (
    <section>
      <h1>Inbox</h1>
      <AlertSettings />
      {inbox.error ? <p className="error">{inbox.error}</p> : null}
      <ul className="inbox">
        {items.map((i) => (
          <InboxItem key={i.id} item={i} onDone={inbox.reload} />
        ))}
        {inbox.data && items.length === 0 ? <li className="empty">Nothing is waiting for you.</li> : null}
      </ul>
    </section>
  );
}

function InboxItem({ item, onDone }: { item: InteractionView; onDone: () => void }) {
  const { what, detail, risk } = describe(item);
  const [kept, setKept] = useState(() => keptAnswers.get(item.id));
  const [reason, setReason] = useState(() => (kept?.answer.confirmed === false ? (kept.answer.message ?? '') : ''));
  const [denying, setDenying] = useState(kept?.answer.confirmed === false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const store = useStoreFault(kept?.code);
  const runLink = `#/runs/${encodeURIComponent(item.runId)}`;
  const send = async (fields: AnswerFields) => {
    setBusy(true);
    setError(undefined);
    try {
      await respond(item.id, fields);
      keptAnswers.delete(item.id);
      store.clear();
      onDone();
    } catch (e) {
      // The store refused it: the answer stays, with a banner that sends it again.
      const code = storeFaultOf(e);
      if (code) {
        keptAnswers.set(item.id, fields, code);
        setKept({ answer: fields, code });
        store.failed(code);
      } else {
        keptAnswers.delete(item.id);
        store.clear();
        setError(e instanceof ApiError ? e.message : (e as Error).message);
      }
    } finally {
      setBusy(false);
    }
  };
  const answer = (confirmed: boolean) => send({ kind: 'confirm', confirmed, remember: 'once', ...(confirmed ? {} : { message: reason.trim() || 'Denied from the inbox.' }) });
  const headingId = `inbox-${item.id}`;
  const when = `asked ${relativeTime(item.createdAt)}${item.request.expiresAt ? ` · expires ${new Date(item.request.expiresAt).toLocaleTimeString()}` : ''}`;
  return (
    <li className="inbox-item" data-interaction={item.id} aria-labelledby={headingId}>
      {item.context?.task ? <p className="ask-task">{item.context.task}</p> : null}
      <div className="inbox-head">
        <strong id={headingId}>{what}</strong>
        {risk ? <span className={`risk risk-${risk.toLowerCase()}`}>{risk.toLowerCase()} risk</span> : null}
      </div>
      {detail ? <code className="inbox-detail">{detail}</code> : null}
      {item.context ? (
        <AskContextLine context={item.context} task={false} extra={`${item.userId} · ${when}`} />
      ) : (
        <span className="meta">
          run {item.runId.slice(0, 12)} · {item.userId} · {when}
        </span>
      )}
      {item.kind === 'confirm' ? (
        <div className="inbox-actions">
          <button type="button" className={risk === 'HIGH' ? undefined : 'primary'} disabled={busy} onClick={() => void answer(true)}>
            Allow once
          </button>
          {denying ? (
            <form
              className="row"
              onSubmit={(e) => {
                e.preventDefault();
                void answer(false);
              }}
            >
              <label className="sr-only" htmlFor={`reason-${item.id}`}>
                Reason for denying
              </label>
              <input id={`reason-${item.id}`} value={reason} onChange={(e) => setReason(e.target.value)} placeholder="Why not? (the agent reads this)" />
              <button type="submit" className="danger" disabled={busy}>
                Deny
              </button>
            </form>
          ) : (
            <button type="button" onClick={() => setDenying(true)}>
              Deny…
            </button>
          )}
          <a href={runLink}>Open in run</a>
        </div>
      ) : (
        <div className="inbox-actions">
          <a className="button" href={runLink}>
            Answer in the run
          </a>
        </div>
      )}
      {store.fault && kept ? <StoreFaultBanner fault={store.fault} what="answer" summary={describeKeptAnswer(kept.answer)} busy={busy} onSendAgain={() => void send(kept.answer)} /> : null}
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}
