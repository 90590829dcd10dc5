/** The marker put where text was cut, so the model knows output is missing and how much. */
export function truncationMarker(removed: number): string {
  return `\n[... ${removed} characters truncated ...]\n`;
}

/**
 * Keeps the head and the tail of a long text: the start says what a command did, the end usually
 * holds the error or the summary.
 */
export function truncateMiddle(text: string, maxChars: number): { text: string; truncated: number } {
  if (text.length <= maxChars) return { text, truncated: 0 };
  const head = Math.ceil(maxChars / 2);
  const tail = maxChars - head;
  const removed = text.length - head - tail;
  return { text: text.slice(0, head) + truncationMarker(removed) + text.slice(text.length - tail), truncated: removed };
}
