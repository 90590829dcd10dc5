import { useState } from 'react';

/** Asks for the bearer token the server was configured with (SAGE_TOKENS or a tokens file). */
export function Login({ onToken, error }: { onToken: (token: string) => void; error?: string }) {
  const [token, setToken] = useState('');
  return (
    <main className="login">
      <h1>Sage</h1>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (token.trim()) onToken(token.trim());
        }}
      >
        <label htmlFor="token">Access token</label>
        <input id="token" type="password" autoComplete="current-password" autoFocus value={token} onChange={(e) => setToken(e.target.value)} />
        {error ? (
          <p className="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" className="primary">
          Sign in
        </button>
      </form>
    </main>
  );
}
