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

/** Sentences the loop and tools write to steer the model; a person reading the terminal does not need them. */
const MODEL_ONLY = [/\s*You can now continue with the user's answers in mind\./g, /\s*Do not retry\b[^.]*\./g, /\s*Fix the input and call the tool again\./g];

/** A result or reason as a person should read it: without the instructions meant for the model. */
export function forPerson(text: string): string {
  return MODEL_ONLY.reduce((t, pattern) => t.replace(pattern, ''), text).trim();
}

/** Why a call did not run, in words for the person at the terminal (the model reads its own text). */
export function deniedForPerson(decision: { source: string; reason: string }): string {
  const reason = forPerson(decision.reason);
  if (decision.source === 'user' && reason.startsWith('denied by the user')) {
    const message = reason.slice('denied by the user'.length).replace(/^:\s*/, '');
    return message ? `You denied it. Your message to the agent: "${message}"` : 'You denied it.';
  }
  return `Not run: ${reason.replace(/^not run:\s*/, '')}`;
}
