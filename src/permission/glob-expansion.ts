import { readdirSync } from 'node:fs';
import path from 'node:path';
import picomatch from 'picomatch';

/**
 * What a shell pattern in an argument may stand for, so a deny rule sees the files it names:
 * `cat .en?` or `cat .{env,x}` reads `.env`. Brace expansion is textual (done once per command
 * text); glob patterns are matched against the disk for each decision, as the shell will.
 */

const MAX_BRACE_WORDS = 256;
/** Directory entries one pattern may look at before the answer is "cannot tell". */
const MAX_ENTRIES = 5_000;

export function hasGlob(text: string): boolean {
  return /[*?[]/.test(text);
}

/** `a{b,c}d` → `abd acd`, `{1..3}` → `1 2 3`; undefined when it grows past a limit. */
export function expandBraces(word: string): string[] | undefined {
  const out: string[] = [];
  const work = [word];
  while (work.length > 0) {
    const w = work.pop()!;
    const found = firstBrace(w);
    if (!found) {
      out.push(w);
      if (out.length > MAX_BRACE_WORDS) return undefined;
      continue;
    }
    if (found === 'too-large') return undefined;
    const { start, end, alternatives } = found;
    for (const alt of alternatives) work.push(w.slice(0, start) + alt + w.slice(end + 1));
    if (work.length > MAX_BRACE_WORDS) return undefined;
  }
  return out.reverse();
}

function firstBrace(w: string): { start: number; end: number; alternatives: string[] } | 'too-large' | undefined {
  for (let start = w.indexOf('{'); start >= 0; start = w.indexOf('{', start + 1)) {
    let depth = 0;
    const commas: number[] = [];
    for (let i = start; i < w.length; i++) {
      const c = w[i];
      if (c === '{') depth += 1;
      else if (c === '}') {
        depth -= 1;
        if (depth === 0) {
          const body = w.slice(start + 1, i);
          if (commas.length > 0) {
            const cuts = [start, ...commas, i];
            return { start, end: i, alternatives: cuts.slice(0, -1).map((cut, k) => w.slice(cut + 1, cuts[k + 1])) };
          }
          const range = sequence(body);
          if (range === null) return 'too-large';
          if (range) return { start, end: i, alternatives: range };
          break;
        }
      } else if (c === ',' && depth === 1) commas.push(i);
    }
  }
  return undefined;
}

/** `{1..3}`, `{a..c}`, `{1..9..2}`; null when it is too long to list. */
function sequence(body: string): string[] | null | undefined {
  const m = /^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$/.exec(body);
  if (!m) return undefined;
  const numeric = /\d/.test(m[1]!);
  if (numeric !== /\d/.test(m[2]!)) return undefined;
  const from = numeric ? Number(m[1]) : m[1]!.charCodeAt(0);
  const to = numeric ? Number(m[2]) : m[2]!.charCodeAt(0);
  const step = Math.max(1, Math.abs(Number(m[3] ?? 1)));
  if (Math.abs(to - from) / step > MAX_BRACE_WORDS) return null;
  const out: string[] = [];
  for (let v = from; from <= to ? v <= to : v >= to; v += from <= to ? step : -step) out.push(numeric ? String(v) : String.fromCharCode(v));
  return out;
}

const segmentMatchers = new Map<string, RegExp>();
function segmentMatcher(segment: string): RegExp {
  let re = segmentMatchers.get(segment);
  if (!re) {
    // A leading dot need not be written out (stricter than bash): `?env` and `[.]env` may be `.env`;
    // only a segment starting with `*` leaves dot files out, as every shell does.
    re = picomatch.makeRe(segment === '**' ? '*' : segment, { dot: !segment.startsWith('*') });
    if (segmentMatchers.size > 1024) segmentMatchers.clear();
    segmentMatchers.set(segment, re);
  }
  return re;
}

/**
 * The existing absolute paths a glob pattern matches from `cwd` (`~/` is the home folder); an
 * empty list when nothing matches (the shell then passes the word on as it is), undefined when
 * there are too many entries to look at.
 */
export function expandGlob(pattern: string, cwd: string, home: string): string[] | undefined {
  const absolute = pattern === '~' || pattern.startsWith('~/') ? home + pattern.slice(1) : path.resolve(cwd, pattern);
  const segments = absolute.split('/').slice(1);
  let current = ['/'];
  let seen = 0;
  for (const segment of segments) {
    if (segment === '' || segment === '.') continue;
    if (!hasGlob(segment)) {
      current = current.map((dir) => path.join(dir, segment));
      continue;
    }
    const re = segmentMatcher(segment);
    const next: string[] = [];
    for (const dir of current) {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        continue; // not a folder, or unreadable: the shell finds nothing there either
      }
      seen += names.length;
      if (seen > MAX_ENTRIES) return undefined;
      for (const name of names) if (re.test(name)) next.push(path.join(dir, name));
    }
    current = next;
    if (current.length === 0) return [];
  }
  return current;
}
