/**
 * `new Date(ms).toISOString()` for the current time, cached per millisecond. Formatting a date
 * costs about a microsecond on a small machine and the loop stamps a dozen events per step, most
 * within the same millisecond, so the string is made once per millisecond. Same output.
 */
let lastMs = Number.NaN;
let lastIso = '';

export function isoNow(ms: number = Date.now()): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** The time of the latest clock read above (an event just stamped), without reading the clock again. */
export function lastClockMs(): number {
  return Number.isNaN(lastMs) ? Date.now() : lastMs;
}
