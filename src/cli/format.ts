/** Short, one-line renderings of tool inputs and results for the terminal. */

export function summarizeInput(toolName: string, input: unknown): string {
  const value = (input ?? {}) as Record<string, unknown>;
  const main =
    toolName === 'Bash' ? value.command
    : toolName === 'Read' || toolName === 'Write' || toolName === 'Edit' ? value.file_path
    : toolName === 'Glob' || toolName === 'Grep' ? value.pattern
    : undefined;
  const text = typeof main === 'string' ? main : JSON.stringify(input);
  return oneLine(text, 120);
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The first lines of a result, with a count of what is hidden. */
export function summarizeResult(content: string, maxLines: number): string[] {
  const lines = content.replace(/\n+$/, '').split('\n');
  if (lines.length <= maxLines) return lines;
  return [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more line(s) (--expand to show all)`];
}
