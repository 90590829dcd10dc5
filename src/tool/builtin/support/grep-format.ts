import { stat } from 'node:fs/promises';
import type { GrepHits, GrepLine } from './grep-query.js';
import { displayPath } from './resolve-path.js';
import { comparePaths } from './walk-files.js';

/** Entries (files, counts or lines) shown when the model gives no head_limit. */
export const GREP_DEFAULT_HEAD_LIMIT = 250;
/** Minified code puts a whole file on one line; a match in it must not flood the context. */
export const GREP_MAX_LINE_CHARS = 500;
export const GREP_MAX_OUTPUT_CHARS = 30_000;

export interface GrepFormatOptions {
  mode: 'content' | 'files_with_matches' | 'count';
  cwd: string;
  lineNumbers: boolean;
  contextLines: boolean;
  multiline: boolean;
  headLimit?: number;
}

function cutLine(text: string): string {
  return text.length > GREP_MAX_LINE_CHARS ? `${text.slice(0, GREP_MAX_LINE_CHARS)} [... line cut at ${GREP_MAX_LINE_CHARS} characters]` : text;
}

function renderLine(file: string, line: GrepLine, lineNumbers: boolean): string {
  const sep = line.match ? ':' : '-';
  return lineNumbers ? `${file}${sep}${line.lineNumber}${sep}${cutLine(line.text)}` : `${file}${sep}${cutLine(line.text)}`;
}

/** Stops at a line boundary under the character cap rather than mid-line. */
function capChars(lines: string[]): { text: string; cut: boolean } {
  let size = 0;
  for (let i = 0; i < lines.length; i++) {
    size += lines[i]!.length + 1;
    if (size > GREP_MAX_OUTPUT_CHARS) return { text: lines.slice(0, i).join('\n'), cut: true };
  }
  return { text: lines.join('\n'), cut: false };
}

async function newestFirst(paths: string[]): Promise<string[]> {
  const mtimes = await Promise.all(paths.map((p) => stat(p).then((s) => s.mtimeMs, () => 0)));
  return paths
    .map((p, i) => ({ p, mtime: mtimes[i]! }))
    .sort((a, b) => b.mtime - a.mtime || comparePaths(a.p, b.p))
    .map((entry) => entry.p);
}

/**
 * The one formatter both Grep backends feed, so the model reads the same text whichever ran:
 * file lists newest first, counts and lines in path order, `path:line:text` like ripgrep.
 */
export async function formatGrepHits(hits: GrepHits, options: GrepFormatOptions): Promise<{ content: string; shown: number; total: number }> {
  const limit = options.headLimit ?? GREP_DEFAULT_HEAD_LIMIT;
  const show = (p: string): string => displayPath(options.cwd, p);
  if (hits.files.length === 0) return { content: 'No matches found.', shown: 0, total: 0 };

  if (options.mode === 'files_with_matches') {
    const ordered = await newestFirst(hits.files.map((f) => f.path));
    const listed = ordered.slice(0, limit).map(show);
    const { text, cut } = capChars(listed);
    const shown = cut ? text.split('\n').length : listed.length;
    const header = `Found ${ordered.length} ${ordered.length === 1 ? 'file' : 'files'}`;
    const note =
      shown < ordered.length
        ? `\n[Showing ${shown} of ${ordered.length} files, most recently modified first. Narrow the search with path, glob or type, or raise head_limit.]`
        : '';
    return { content: `${header}\n${text}${note}`, shown, total: ordered.length };
  }

  if (options.mode === 'count') {
    const ordered = [...hits.files].sort((a, b) => comparePaths(a.path, b.path));
    const total = ordered.reduce((sum, f) => sum + f.count, 0);
    const listed = ordered.slice(0, limit).map((f) => `${show(f.path)}:${f.count}`);
    const { text, cut } = capChars(listed);
    const shown = cut ? text.split('\n').length : listed.length;
    const unit = options.multiline ? 'matches' : 'matching lines';
    const note = shown < ordered.length ? `\n[Showing ${shown} of ${ordered.length} files; raise head_limit to see more.]` : '';
    return { content: `${text}\n\nFound ${total} ${unit} in ${ordered.length} ${ordered.length === 1 ? 'file' : 'files'}.${note}`, shown, total };
  }

  const rendered: string[] = [];
  let lines = 0;
  let truncated = hits.stoppedEarly;
  let previous: { file: string; lineNumber: number } | undefined;
  outer: for (const file of [...hits.files].sort((a, b) => comparePaths(a.path, b.path))) {
    for (const line of file.lines) {
      if (lines >= limit) {
        truncated = true;
        break outer;
      }
      // ripgrep separates non-adjacent groups with `--`, only when context lines were asked for.
      const adjacent = previous?.file === file.path && previous.lineNumber + 1 === line.lineNumber;
      if (options.contextLines && previous && !adjacent) rendered.push('--');
      rendered.push(renderLine(show(file.path), line, options.lineNumbers));
      previous = { file: file.path, lineNumber: line.lineNumber };
      lines++;
    }
  }
  const { text, cut } = capChars(rendered);
  if (cut) truncated = true;
  const note = truncated ? `\n[Output cut after ${cut ? text.split('\n').length : rendered.length} lines; there are more. Narrow the search or raise head_limit.]` : '';
  return { content: text + note, shown: lines, total: lines };
}
