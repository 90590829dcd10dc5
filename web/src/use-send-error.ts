import { useEffect, useState } from 'react';
import { ApiError } from './api';
import { describeAnswerError } from './relative-time';

/**
 * The error of a send (an answer, a reply), in words. A network failure ("Failed to fetch") stays
 * on screen only while the server is unreachable: the page probes /healthz and clears it as soon
 * as the server answers again.
 */
export function useSendError(): { error?: string; fail: (e: unknown) => void; clear: () => void } {
  const [error, setError] = useState<{ text: string; offline: boolean }>();
  useEffect(() => {
    if (!error?.offline) return;
    const timer = setInterval(() => {
      fetch('/healthz')
        .then((res) => {
          if (res.ok) setError(undefined);
        })
        .catch(() => undefined);
    }, 1_000);
    return () => clearInterval(timer);
  }, [error]);
  const fail = (e: unknown) => {
    if (e instanceof ApiError) setError({ text: describeAnswerError(e.code, e.message), offline: false });
    else setError({ text: `Could not reach the server (${(e as Error).message}). Nothing was sent; try again when it is back.`, offline: true });
  };
  return { error: error?.text, fail, clear: () => setError(undefined) };
}
