import { useCallback, useEffect, useRef, useState } from 'react';
import { onUserEvent, type UserEvent } from './user-events';

/**
 * Loads `load()` now and again whenever the user stream (GET /events) reports a change that
 * `relevant` cares about — live lists without polling. Reloads that arrive in a burst are merged.
 */
export function useLive<T>(load: () => Promise<T>, deps: unknown[] = [], relevant: (event: UserEvent) => boolean = () => true): { data?: T; error?: string; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const relevantRef = useRef(relevant);
  relevantRef.current = relevant;
  useEffect(() => {
    let alive = true;
    load().then(
      (value) => {
        if (alive) {
          setData(value);
          setError(undefined);
        }
      },
      (e: Error) => alive && setError(e.message),
    );
    return () => {
      alive = false;
    };
  }, [tick, ...deps]);
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const off = onUserEvent((event) => {
      if (event.type !== 'resync' && !relevantRef.current(event)) return;
      clearTimeout(timer);
      timer = setTimeout(reload, 100);
    });
    return () => {
      clearTimeout(timer);
      off();
    };
  }, [reload]);
  return { data, error, reload };
}
