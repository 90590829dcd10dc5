/**
 * Lines of a text as a diff counts them: a final newline ends the last line rather than starting
 * another, so "one\ntwo\n" is 2 lines (as the approval's diff and the terminal say), and "" is 0.
 */
export function lineCount(text: string): number {
  if (text === '') return 0;
  const parts = text.split('\n').length;
  return text.endsWith('\n') ? parts - 1 : parts;
}
