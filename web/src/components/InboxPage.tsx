import { useState } from 'react';
import { api, ApiError, respond } from '../api';
import { describe, loadPending } from '../inbox-items';
import { relativeTime } from '../relative-time';
import { useLive } from '../use-poll';
import type { InteractionView } from '../types';
import { AlertSettings } from './AlertSettings';

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
  const [reason, setReason] = useState('');
  const [denying, setDenying] = useState(false);
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const runLink = `#/runs/${encodeURIComponent(item.runId)}`;
  const answer = async (confirmed: boolean) => {
    setBusy(true);
    setError(undefined);
    try {
      await respond(item.id, { kind: 'confirm', confirmed, remember: 'once', ...(confirmed ? {} : { message: reason.trim() || 'Denied from the inbox.' }) });
      onDone();
    } catch (e) {
      setError(e instanceof ApiError ? e.message : (e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  const headingId = `inbox-${item.id}`;
  return (
    <li className="inbox-item" data-interaction={item.id} aria-labelledby={headingId}>
      <div className="inbox-head">
        <strong id={headingId}>{what}</strong>
        {risk ? <span className={`risk risk-${risk.toLowerCase()}`}>{risk.toLowerCase()} risk</span> : null}
      </div>
      {detail ? <code className="inbox-detail">{detail}</code> : null}
      <span className="meta">
        run {item.runId.slice(0, 12)} · {item.userId} · asked {relativeTime(item.createdAt)}
        {item.request.expiresAt ? ` · expires ${new Date(item.request.expiresAt).toLocaleTimeString()}` : ''}
      </span>
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
      {error ? (
        <p className="error" role="alert">
          {error}
        </p>
      ) : null}
    </li>
  );
}
