import { readFileSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';
import { looksBinary } from './binary-file.js';
import { GrepQueryError, type GrepFileHits, type GrepHits, type GrepLine, type GrepQuery } from './grep-query.js';
import { comparePaths, walkFiles } from './walk-files.js';

/**
 * Files are read synchronously in slices of this many milliseconds, then the event loop gets a
 * turn (timers, the abort signal). Measured on 10,000 small files: fs.promises.readFile took
 * ~1.5 s (four thread-pool round trips per file), readFileSync ~0.2 s.
 */
const SLICE_MS = 30;

function compile(query: GrepQuery): { perLine: RegExp; whole: RegExp } {
  const flags = query.ignoreCase ? 'i' : '';
  try {
    if (query.multiline) {
      const whole = new RegExp(query.pattern, `${flags}gms`);
      return { perLine: whole, whole };
    }
    // `whole` is a quick filter over the file: a line that matches also matches there with `m`.
    return { perLine: new RegExp(query.pattern, flags), whole: new RegExp(query.pattern, `${flags}m`) };
  } catch (error) {
    throw new GrepQueryError(`Invalid regular expression: ${(error as Error).message}`);
  }
}

/** Like ripgrep's --glob: a glob without `/` matches the file name at any depth. */
function fileFilter(query: GrepQuery): (relativePath: string) => boolean {
  // picomatch's `basename` option breaks patterns that do contain a slash, so only set it without.
  // A leading `/` anchors to the search root, as in .gitignore.
  const glob = query.glob?.replace(/^\//, '');
  const globMatch = glob === undefined ? undefined : picomatch(glob, { dot: true, basename: !query.glob!.includes('/') });
  const extensions = query.extensions ? new Set(query.extensions) : undefined;
  return (relativePath) => {
    if (globMatch && !globMatch(relativePath)) return false;
    if (extensions && !extensions.has(path.extname(relativePath).slice(1))) return false;
    return true;
  };
}

function splitLines(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

/** Matching line numbers (0-based) and the count ripgrep would report. */
function findMatches(text: string, query: GrepQuery, regex: { perLine: RegExp; whole: RegExp }, lines: string[]): { matched: Set<number>; count: number } {
  const matched = new Set<number>();
  if (!query.multiline) {
    lines.forEach((line, index) => {
      if (regex.perLine.test(line.replace(/\r$/, ''))) matched.add(index);
    });
    return { matched, count: matched.size };
  }
  // Line starts, to map a match's offsets to the lines it spans.
  const starts = [0];
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) starts.push(i + 1);
  const lineAt = (offset: number): number => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  };
  let count = 0;
  regex.whole.lastIndex = 0;
  for (let m = regex.whole.exec(text); m !== null; m = regex.whole.exec(text)) {
    if (m[0].length === 0) regex.whole.lastIndex++;
    count++;
    const first = lineAt(m.index);
    // A match ending with its newline does not reach into the next line.
    const last = lineAt(Math.max(m.index, m.index + m[0].length - 1));
    for (let line = first; line <= Math.min(last, lines.length - 1); line++) matched.add(line);
  }
  return { matched, count };
}

function withContext(lines: string[], matched: Set<number>, before: number, after: number): GrepLine[] {
  const shown = new Map<number, boolean>();
  for (const index of [...matched].sort((a, b) => a - b)) {
    for (let i = Math.max(0, index - before); i <= Math.min(lines.length - 1, index + after); i++) {
      if (!shown.has(i)) shown.set(i, false);
    }
    shown.set(index, true);
  }
  return [...shown.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, match]) => ({ lineNumber: index + 1, text: lines[index]!.replace(/\r$/, ''), match }));
}

function searchFile(file: string, query: GrepQuery, regex: { perLine: RegExp; whole: RegExp }): GrepFileHits | undefined {
  const buffer = readFileSync(file);
  // ripgrep skips binary files found while walking (NUL in the first buffer); so do we.
  if (looksBinary(buffer)) return undefined;
  const text = buffer.toString('utf8');
  regex.whole.lastIndex = 0;
  if (!regex.whole.test(text)) return undefined;
  const lines = splitLines(text);
  const { matched, count } = findMatches(text, query, regex, lines);
  if (count === 0) return undefined;
  const shown = query.mode === 'content' ? withContext(lines, matched, query.before, query.after) : [];
  return { path: file, count, lines: shown };
}

/**
 * The JavaScript fallback for machines without ripgrep: walks with the same ignore rules and
 * returns the same hits, so the model sees identical output either way.
 */
export async function searchWithJavaScript(query: GrepQuery): Promise<GrepHits> {
  const regex = compile(query);
  let candidates: string[];
  const errors: NodeJS.ErrnoException[] = [];
  if (query.rootIsFile) {
    candidates = [query.root];
  } else {
    const walked = await walkFiles({ root: query.root, signal: query.signal });
    errors.push(...walked.errors);
    const keep = fileFilter(query);
    candidates = walked.files.filter((file) => keep(file.relativePath)).map((file) => file.path);
  }
  candidates.sort(comparePaths);

  const files: GrepFileHits[] = [];
  let lineCount = 0;
  let stoppedEarly = false;
  let sliceStarted = Date.now();
  // In path order, so content mode can stop as soon as it has enough lines.
  for (const file of candidates) {
    if (Date.now() - sliceStarted > SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStarted = Date.now();
    }
    if (query.signal?.aborted) throw new GrepQueryError('The search was cancelled.');
    if (query.mode === 'content' && lineCount > query.stopAfterLines) {
      stoppedEarly = true;
      break;
    }
    let hits: GrepFileHits | undefined;
    try {
      hits = searchFile(file, query, regex);
    } catch (error) {
      errors.push(error as NodeJS.ErrnoException);
      continue;
    }
    if (!hits) continue;
    files.push(hits);
    lineCount += hits.lines.length;
  }
  if (files.length === 0 && errors.length > 0 && !stoppedEarly) {
    const first = errors[0]!;
    throw new GrepQueryError(`${first.path ?? query.root}: ${first.message}`);
  }
  return { files, stoppedEarly };
}
