import type { Me } from '../types';

const LINKS = [
  ['runs', 'Runs'],
  ['inbox', 'Inbox'],
  ['permissions', 'Permissions'],
  ['audit', 'Audit'],
] as const;

export function NavBar({ me, page, onSignOut }: { me: Me; page: string; onSignOut: () => void }) {
  return (
    <header className="nav">
      <a className="brand" href="#/runs">
        Sage
      </a>
      <nav aria-label="Main">
        {LINKS.map(([key, label]) => (
          <a key={key} href={`#/${key}`} aria-current={page === key ? 'page' : undefined}>
            {label}
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
