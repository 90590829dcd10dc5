const UNITS: [Intl.RelativeTimeFormatUnit, number][] = [
  ['day', 86_400_000],
  ['hour', 3_600_000],
  ['minute', 60_000],
  ['second', 1_000],
];

/** "2 minutes ago", "just now": a time as a person says it. */
export function relativeTime(iso: string, now = Date.now()): string {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) return iso;
  const diff = ms - now;
  if (Math.abs(diff) < 10_000) return 'just now';
  const format = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
  for (const [unit, size] of UNITS) if (Math.abs(diff) >= size) return format.format(Math.round(diff / size), unit);
  return 'just now';
}

/**
 * The server's 409 for a request someone else answered names the id and an ISO time; the page says
 * who and when in words instead.
 */
export function describeAnswerError(code: string | undefined, message: string): string {
  if (code !== 'interaction_already_answered') return message;
  const match = /already answered(?: by (.+?))?(?: at (\d{4}-\d\d-\d\dT[\d:.]+Z))?\.$/.exec(message);
  const who = match?.[1] ? (match[1] === 'you' ? 'you' : match[1]) : 'someone';
  const when = match?.[2] ? ` ${relativeTime(match[2])}` : '';
  return `Already answered by ${who}${when} (in another tab or window). This page will catch up in a moment.`;
}
