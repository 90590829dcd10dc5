import { useEffect, useRef } from 'react';
import { api } from '../api';
import { announce } from '../alerts';
import { loadPending } from '../inbox-items';
import { useLive } from '../use-poll';
import type { Me } from '../types';

const LINKS = [
  ['runs', 'Runs'],
  ['inbox', 'Inbox'],
  ['permissions', 'Permissions'],
  ['audit', 'Audit'],
] as const;

export function NavBar({ me, page, onSignOut }: { me: Me; page: string; onSignOut: () => void }) {
  // The pending count follows the user stream, so the tab title says it even on another page.
  const pending = useLive(() => loadPending(api), [], (e) => e.type === 'interaction');
  const count = pending.data?.length ?? 0;
  const seen = useRef<Set<string> | undefined>(undefined);
  useEffect(() => {
    if (!pending.data) return;
    const ids = new Set(pending.data.map((i) => i.id));
    // The first load is what was already waiting: only what arrives later is announced.
    if (seen.current) announce(pending.data.filter((i) => !seen.current!.has(i.id)));
    seen.current = ids;
    document.title = count > 0 ? `(${count}) Sage` : 'Sage';
  }, [pending.data]);
  return (
    <header className="nav">
      <a className="brand" href="#/runs">
        Sage
      </a>
      <nav aria-label="Main">
        {LINKS.map(([key, label]) => (
          <a key={key} href={`#/${key}`} aria-current={page === key ? 'page' : undefined}>
            {label}
            {key === 'inbox' && count > 0 ? (
              <span className="count" data-pending-count={count}>
                <span className="sr-only">, </span>
                {count}
                <span className="sr-only"> waiting</span>
              </span>
            ) : null}
          </a>
        ))}
      </nav>
      <span className="who">
        {me.userId}
        {me.role === 'admin' ? ' (admin)' : ''}
        {me.auth ? (
          <button type="button" className="link" onClick={onSignOut}>
            Sign out
          </button>
        ) : null}
      </span>
    </header>
  );
}
