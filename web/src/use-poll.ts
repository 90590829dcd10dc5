import { useCallback, useEffect, useState } from 'react';

/** Loads `load()` now and every `ms`, for lists that show live status (runs, inbox). */
export function usePoll<T>(load: () => Promise<T>, ms: number, deps: unknown[] = []): { data?: T; error?: string; reload: () => void } {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    let alive = true;
    const run = () =>
      load().then(
        (value) => {
          if (alive) {
            setData(value);
            setError(undefined);
          }
        },
        (e: Error) => alive && setError(e.message),
      );
    void run();
    const timer = setInterval(run, ms);
    return () => {
      alive = false;
      clearInterval(timer);
    };
  }, [tick, ms, ...deps]);
  return { data, error, reload };
}
