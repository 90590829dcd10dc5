/** Short, one-line renderings of tool inputs and results for the terminal. */

export function summarizeInput(toolName: string, input: unknown): string {
  const value = (input ?? {}) as Record<string, unknown>;
  const main =
    toolName === 'Bash' ? value.command
    : toolName === 'Read' || toolName === 'Write' || toolName === 'Edit' ? value.file_path
    : toolName === 'Glob' || toolName === 'Grep' ? value.pattern
    : toolName === 'AskUserQuestion' && Array.isArray(value.questions) ? value.questions.map((q: { question?: string }) => q.question).join(' · ')
    : undefined;
  const text = typeof main === 'string' ? main : JSON.stringify(input);
  return oneLine(text, 120);
}

export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/** The first (or, for command output, the last) lines of a result, with a count of what is hidden. */
export function summarizeResult(content: string, maxLines: number, fromEnd = false): string[] {
  const lines = content.replace(/\n+$/, '').split('\n');
  if (lines.length <= maxLines) return lines;
  const hidden = `… ${lines.length - maxLines} more line(s) (--expand to show all)`;
  return fromEnd ? [hidden, ...lines.slice(-maxLines)] : [...lines.slice(0, maxLines), hidden];
}
