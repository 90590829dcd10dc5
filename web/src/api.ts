import type { AnswerFields } from './types';

const TOKEN_KEY = 'sage.token';

export function getToken(): string | null {
  return localStorage.getItem(TOKEN_KEY);
}

export function setToken(token: string | null): void {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

/** An `{ error: { code, message, field? } }` answer from the server. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function authHeaders(): Record<string, string> {
  const token = getToken();
  return token ? { authorization: `Bearer ${token}` } : {};
}

/** Calls the API; throws ApiError with the server's code and message on any error status. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(), accept: 'application/json' };
  // Every state-changing call says JSON, even without a body (DELETE): the server refuses any that
  // does not, which is what keeps a cross-site form from acting on a no-auth loopback server.
  if (body !== undefined || method !== 'GET') headers['content-type'] = 'application/json';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  const json = text ? (JSON.parse(text) as unknown) : undefined;
  if (!res.ok) {
    const error = (json as { error?: { code?: string; message?: string; field?: string } } | undefined)?.error;
    throw new ApiError(res.status, error?.code ?? 'http_error', error?.message ?? `HTTP ${res.status}`, error?.field);
  }
  return json as T;
}

export function respond(interactionId: string, answer: AnswerFields): Promise<unknown> {
  return api('POST', `/interactions/${encodeURIComponent(interactionId)}/respond`, { requestId: interactionId, ...answer });
}
