import { useEffect, useState } from 'react';
import { api, ApiError, setToken } from '../api';
import { useRoute } from '../router';
import type { Me } from '../types';
import { AuditPage } from './AuditPage';
import { ChatPage } from './ChatPage';
import { InboxPage } from './InboxPage';
import { Login } from './Login';
import { NavBar } from './NavBar';
import { PermissionsPage } from './PermissionsPage';
import { RunsPage } from './RunsPage';

/** Who is signed in decides everything else; then the hash route picks the page. */
export function App() {
  const [me, setMe] = useState<Me | null | undefined>(undefined);
  const [loginError, setLoginError] = useState<string>();
  const route = useRoute();

  const loadMe = () =>
    api<Me>('GET', '/me').then(setMe, (e: unknown) => {
      setMe(null);
      if (e instanceof ApiError && e.status !== 401) setLoginError(e.message);
    });
  useEffect(() => {
    void loadMe();
  }, []);

  if (me === undefined) return <p className="loading">Loading…</p>;
  if (me === null)
    return (
      <Login
        error={loginError}
        onToken={(token) => {
          setToken(token);
          setLoginError(undefined);
          api<Me>('GET', '/me').then(setMe, (e: Error) => {
            setToken(null);
            setLoginError(e.message);
          });
        }}
      />
    );

  const [page = 'runs', id] = route;
  return (
    <div className="app">
      <NavBar me={me} page={page} onSignOut={() => (setToken(null), setMe(null))} />
      <main className="page">
        {page === 'runs' && id ? <ChatPage runId={id} key={id} /> : null}
        {page === 'runs' && !id ? <RunsPage me={me} /> : null}
        {page === 'inbox' ? <InboxPage /> : null}
        {page === 'permissions' ? <PermissionsPage userId={me.userId} /> : null}
        {page === 'audit' ? <AuditPage /> : null}
      </main>
    </div>
  );
}
