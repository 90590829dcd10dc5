// The one way a test waits for something another part of the system does (a store row, a file, an
// event, a process's output): poll the check until it holds, with a deadline. Never a fixed sleep
// before an assertion: a fixed sleep is too short on a loaded machine and wasted time on an idle one.

export interface EventuallyOptions {
  /** Give up after this long (default 10 s: the check is cheap, a loaded CI machine is slow). */
  timeoutMs?: number;
  /** What is awaited, for the error when it never comes. */
  what?: string;
}

/**
 * Resolves to the first value of `check` that is neither `undefined` nor `false` (a row, `true`, a
 * count); rejects when none comes by the deadline. A check that throws fails at once.
 */
export async function eventually<T>(
  check: () => Promise<T | undefined | false> | T | undefined | false,
  options: number | EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 10_000, what = 'condition' } = typeof options === 'number' ? { timeoutMs: options } : options;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > until) throw new Error(`${what} not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Resolves once the clock is past a deadline the code under test stored (a lease's end, a request's
 * expiry): where the passing of time is the subject, the test waits for that time, not a guess at it.
 */
export async function untilPast(deadline: string | number | null | undefined, timeoutMs = 10_000): Promise<void> {
  if (deadline === null || deadline === undefined) throw new Error('untilPast: no deadline was stored');
  const at = typeof deadline === 'number' ? deadline : Date.parse(deadline);
  await eventually(() => Date.now() > at, { timeoutMs, what: `the clock passing ${new Date(at).toISOString()}` });
}
