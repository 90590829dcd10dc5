import { createRequire } from 'node:module';
import path from 'node:path';
import { GrepQueryError, type GrepFileHits, type GrepHits, type GrepLine, type GrepQuery } from './grep-query.js';
import { comparePaths } from './walk-files.js';

/** Name of the custom ripgrep type that carries Grep's `type` extensions. */
const TYPE_NAME = 'sagetype';

/**
 * Arguments that make ripgrep see the same files as the JS fallback: no user config, hidden files
 * included, .gitignore honoured even outside a git repository, no other ignore sources.
 */
export function ripgrepArgs(query: GrepQuery): string[] {
  const args = [
    '--no-config', '--hidden', '--no-require-git', '--no-ignore-global', '--no-ignore-exclude', '--no-ignore-dot',
    '--glob', '!.git', '--glob', '!node_modules',
    query.ignoreCase ? '--ignore-case' : '--case-sensitive',
  ];
  if (query.multiline) args.push('--multiline', '--multiline-dotall');
  if (query.glob !== undefined) args.push('--glob', query.glob);
  if (query.extensions) {
    for (const ext of query.extensions) args.push('--type-add', `${TYPE_NAME}:*.${ext}`);
    args.push('--type', TYPE_NAME);
  }
  if (query.mode === 'files_with_matches') args.push('--files-with-matches', '--null');
  else if (query.mode === 'count') args.push('--count', '--with-filename', '--null');
  else args.push('--json', '--sort', 'path', '--before-context', String(query.before), '--after-context', String(query.after));
  // Relative to the search directory (the spawn's cwd): ripgrep matches globs that contain a `/`
  // against paths relative to its cwd, so an absolute root would make `src/*.ts` match nothing.
  args.push('--regexp', query.pattern, '--', query.rootIsFile ? path.basename(query.root) : '.');
  return args;
}

interface JsonText {
  text?: string;
  bytes?: string;
}

function decode(value: JsonText | undefined): string {
  if (value?.text !== undefined) return value.text;
  return value?.bytes !== undefined ? Buffer.from(value.bytes, 'base64').toString('utf8') : '';
}

/** Splits ripgrep's line text (one line, or several for a multiline match) without terminators. */
function splitMatchedText(text: string): string[] {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((line) => line.replace(/\r$/, ''));
}

/**
 * Runs ripgrep and turns its output into GrepHits. Content mode reads `--json` (exact line
 * numbers, context flagged, no ambiguity with `:` in paths) sorted by path, so it can stop early.
 */
export function searchWithRipgrep(rgPath: string, query: GrepQuery): Promise<GrepHits> {
  return new Promise((resolve, reject) => {
    const searchDir = query.rootIsFile ? path.dirname(query.root) : query.root;
    // Loaded here, not with the module: every `sage run` loads Grep at its start, few search.
    const { spawn } = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
    const child = spawn(rgPath, ripgrepArgs(query), { cwd: searchDir, stdio: ['ignore', 'pipe', 'pipe'], signal: query.signal });
    const byPath = new Map<string, GrepFileHits>();
    const order: GrepFileHits[] = [];
    let stdoutRest = '';
    let stderr = '';
    let lineCount = 0;
    let stoppedEarly = false;

    const fileFor = (reported: string): GrepFileHits => {
      const filePath = path.resolve(searchDir, reported);
      let hits = byPath.get(filePath);
      if (!hits) {
        hits = { path: filePath, count: 0, lines: [] };
        byPath.set(filePath, hits);
        order.push(hits);
      }
      return hits;
    };

    const onJson = (raw: string): void => {
      if (raw === '') return;
      const event = JSON.parse(raw) as { type: string; data: { path?: JsonText; lines?: JsonText; line_number?: number } };
      if (event.type === 'begin' && lineCount > query.stopAfterLines) {
        // Files come in path order: everything from here on would be cut.
        stoppedEarly = true;
        child.kill();
        return;
      }
      if (event.type !== 'match' && event.type !== 'context') return;
      if (stoppedEarly) return;
      const hits = fileFor(decode(event.data.path));
      const first = event.data.line_number ?? 0;
      const lines: GrepLine[] = splitMatchedText(decode(event.data.lines)).map((text, i) => ({
        lineNumber: first + i,
        text,
        match: event.type === 'match',
      }));
      if (event.type === 'match') hits.count++;
      hits.lines.push(...lines);
      lineCount += lines.length;
    };

    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (query.mode !== 'content') {
        stdoutRest += chunk;
        return;
      }
      const parts = (stdoutRest + chunk).split('\n');
      stdoutRest = parts.pop() ?? '';
      for (const part of parts) onJson(part);
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      if (stderr.length < 4_000) stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      if (query.signal?.aborted) return reject(new GrepQueryError('The search was cancelled.'));
      if (query.mode === 'files_with_matches') {
        for (const filePath of stdoutRest.split('\0')) {
          const trimmed = filePath.replace(/^\n/, '');
          if (trimmed !== '') fileFor(trimmed);
        }
      } else if (query.mode === 'count') {
        // `path\0count\n` per file: the NUL keeps paths with `:` unambiguous.
        for (const line of stdoutRest.split('\n')) {
          const at = line.lastIndexOf('\0');
          if (at > 0) fileFor(line.slice(0, at)).count = Number(line.slice(at + 1));
        }
      } else if (stdoutRest !== '') {
        onJson(stdoutRest);
      }
      const found = order.length > 0;
      if (code === 2 && !found && !stoppedEarly) {
        const message = stderr.trim() || 'ripgrep failed without a message';
        return reject(new GrepQueryError(message.startsWith('regex parse error') ? `Invalid regular expression:\n${message}` : message));
      }
      order.sort((a, b) => comparePaths(a.path, b.path));
      resolve({ files: order, stoppedEarly });
    });
  });
}
