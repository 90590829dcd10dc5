/**
 * The delay a provider asks for, in ms: `retry-after-ms` (OpenAI, a float) wins over `retry-after`
 * (seconds or an HTTP date). Undefined when absent or unreadable.
 */
export function parseRetryAfter(headers: Record<string, string | undefined> | undefined, now = Date.now()): number | undefined {
  if (!headers) return undefined;
  const get = (name: string) => {
    for (const [key, value] of Object.entries(headers)) if (key.toLowerCase() === name) return value;
    return undefined;
  };
  const ms = get('retry-after-ms');
  if (ms !== undefined) {
    const value = Number.parseFloat(ms);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const after = get('retry-after');
  if (after === undefined || after.trim() === '') return undefined;
  if (/^\s*\d+(\.\d+)?\s*$/.test(after)) return Number.parseFloat(after) * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
