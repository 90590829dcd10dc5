import { api } from '../api';
import { usePoll } from '../use-poll';
import type { InteractionView } from '../types';

/** Every pending request across the caller's runs; opening one shows it over its run's chat. */
export function InboxPage() {
  const inbox = usePoll(() => api<{ interactions: InteractionView[] }>('GET', '/interactions?status=pending'), 2_000);
  const items = inbox.data?.interactions ?? [];
  return (
    <section>
      <h1>Inbox</h1>
      {inbox.error ? <p className="error">{inbox.error}</p> : null}
      <ul className="inbox">
        {items.map((i) => (
          <li key={i.id}>
            <a href={`#/runs/${encodeURIComponent(i.runId)}`} data-interaction={i.id}>
              <span className="chip">{i.kind}</span>
              <strong>{i.request.title}</strong>
              <span className="meta">
                {i.userId} · {new Date(i.createdAt).toLocaleString()}
                {i.request.expiresAt ? ` · expires ${new Date(i.request.expiresAt).toLocaleTimeString()}` : ''}
              </span>
            </a>
          </li>
        ))}
        {inbox.data && items.length === 0 ? <li className="empty">Nothing is waiting for you.</li> : null}
      </ul>
    </section>
  );
}
