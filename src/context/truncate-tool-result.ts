/**
 * Cuts a long tool result to at most `maxChars`, keeping the beginning and the end (where errors
 * and summaries usually are) and saying in the middle, for the model, what was left out and how
 * to see it (`hint`, which suits tool results by default).
 *
 * @example
 * truncateToolResult(hugeGrepOutput, 20_000)
 */
export function truncateToolResult(content: string, maxChars: number, options: { hint?: string } = {}): string {
  if (content.length <= maxChars) return content;
  const hint = options.hint ?? 'To see the missing part, ask for a smaller piece: a line range, a narrower pattern, or fewer files.';
  const note = (omitted: number) =>
    `\n\n[… ${omitted} characters omitted: the text had ${content.length} characters and only ${maxChars} are kept. ${hint}]\n\n`;
  // Sized with the largest count the note could state, so the result never exceeds maxChars.
  const budget = maxChars - note(content.length).length;
  if (budget <= 0) return content.slice(0, maxChars);
  const headLength = snapToLine(content, Math.ceil((budget * 2) / 3), 'head');
  const tailLength = budget - headLength;
  const tailStart = snapToLine(content, content.length - tailLength, 'tail');
  return `${content.slice(0, headLength)}${note(tailStart - headLength)}${content.slice(tailStart)}`;
}

/**
 * Moves a cut to a nearby line break so lines are not split, only ever shrinking the kept text
 * and by at most a tenth of it.
 */
function snapToLine(text: string, index: number, side: 'head' | 'tail'): number {
  if (side === 'head') {
    const newline = text.lastIndexOf('\n', index - 1);
    return newline >= 0 && index - (newline + 1) <= index * 0.1 ? newline + 1 : index;
  }
  const kept = text.length - index;
  const newline = text.indexOf('\n', index);
  return newline !== -1 && newline + 1 - index <= kept * 0.1 ? newline + 1 : index;
}
