import { z } from 'zod';
import { defineTool, type Tool } from '../types.js';
import { findExecutable } from './support/find-executable.js';
import { describeFsError } from './support/fs-error.js';
import { extensionsOfType, GREP_FILE_TYPES } from './support/grep-file-types.js';
import { formatGrepHits, GREP_DEFAULT_HEAD_LIMIT } from './support/grep-format.js';
import { searchWithJavaScript } from './support/grep-javascript.js';
import { GrepQueryError, type GrepHits, type GrepQuery } from './support/grep-query.js';
import { searchWithRipgrep } from './support/grep-ripgrep.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { resolvePath } from './support/resolve-path.js';
import { statIfExists } from './support/stat-if-exists.js';

const contextField = (flag: string) =>
  z.number().int(`${flag} is a whole number of lines`).min(0, `${flag} must be 0 or more`).optional();

const inputSchema = z.object({
  pattern: z.string().min(1, 'pattern must not be empty'),
  path: z.string().optional(),
  glob: z.string().min(1).optional(),
  type: z.string().min(1).optional(),
  output_mode: z.enum(['content', 'files_with_matches', 'count']).optional(),
  '-i': z.boolean().optional(),
  '-n': z.boolean().optional(),
  '-A': contextField('-A'),
  '-B': contextField('-B'),
  '-C': contextField('-C'),
  head_limit: z.number().int('head_limit is a whole number').positive('head_limit must be at least 1').optional(),
  multiline: z.boolean().optional(),
});

export type GrepInput = z.infer<typeof inputSchema>;

export interface GrepToolOptions {
  /**
   * The ripgrep binary: a path to use it, `null` to always use the JavaScript search, undefined
   * (the default) to look for `rg` on PATH when the tool first runs.
   */
  rgPath?: string | null;
}

/** Which search produced a result; in `data.backend` for front ends and tests. */
export type GrepBackend = 'ripgrep' | 'javascript';

/**
 * Creates the Grep tool: ripgrep when available (fast on large trees), else a JavaScript search
 * with the same rules and the same output.
 */
export function createGrepTool(options: GrepToolOptions = {}): Tool<GrepInput> {
  let rgPath: string | null | undefined = options.rgPath;
  const ripgrep = (): string | null => {
    // null is a deliberate "no ripgrep", so only undefined triggers the PATH lookup.
    if (rgPath === undefined) rgPath = findExecutable('rg') ?? null;
    return rgPath;
  };

  async function search(query: GrepQuery): Promise<{ hits: GrepHits; backend: GrepBackend }> {
    const rg = ripgrep();
    if (rg !== null) {
      try {
        return { hits: await searchWithRipgrep(rg, query), backend: 'ripgrep' };
      } catch (error) {
        // A binary that vanished or cannot run: the JavaScript search still answers.
        if (error instanceof GrepQueryError || query.signal?.aborted) throw error;
      }
    }
    return { hits: await searchWithJavaScript(query), backend: 'javascript' };
  }

  return defineTool({
    name: 'Grep',
    description: `Search file contents with a regular expression (ripgrep syntax). Searches \`path\` (a file or directory; default the working directory), respecting .gitignore and skipping .git and node_modules. Filter files with \`glob\` (e.g. "*.ts", "src/**/*.tsx") or \`type\` (${Object.keys(GREP_FILE_TYPES).join(', ')}). output_mode: "files_with_matches" (default; files newest first), "content" (matching lines as path:line:text, with -A/-B/-C context lines, -n line numbers on by default) or "count". -i ignores case; multiline lets a pattern span lines (. matches newlines). Results are limited to head_limit entries (default ${GREP_DEFAULT_HEAD_LIMIT}).`,
    inputSchema,
    risk: 'LOW',
    readOnly: true,
    permissionResource: (input, ctx) => resolvePath(ctx.cwd, typeof input?.path === 'string' ? input.path : '.'),
    execute: guardedExecute('Grep', inputSchema, async (input, ctx) => {
      const root = resolvePath(ctx.cwd, input.path ?? '.');
      let info;
      try {
        info = await statIfExists(root);
      } catch (error) {
        return errorResult(`Cannot search ${root}: ${describeFsError(error, root)}`);
      }
      if (!info) return errorResult(`Path does not exist: ${root}. The working directory is ${ctx.cwd}.`);
      let extensions: readonly string[] | undefined;
      if (input.type !== undefined) {
        extensions = extensionsOfType(input.type);
        if (!extensions) {
          return errorResult(`Unknown file type "${input.type}". Known types: ${Object.keys(GREP_FILE_TYPES).join(', ')}; or use glob instead.`);
        }
      }
      const mode = input.output_mode ?? 'files_with_matches';
      const content = mode === 'content';
      const headLimit = input.head_limit ?? GREP_DEFAULT_HEAD_LIMIT;
      const query: GrepQuery = {
        pattern: input.pattern,
        root,
        rootIsFile: !info.isDirectory(),
        glob: input.glob,
        extensions,
        mode,
        ignoreCase: input['-i'] ?? false,
        multiline: input.multiline ?? false,
        before: content ? (input['-B'] ?? input['-C'] ?? 0) : 0,
        after: content ? (input['-A'] ?? input['-C'] ?? 0) : 0,
        stopAfterLines: headLimit,
        signal: ctx.signal,
      };
      let found;
      try {
        found = await search(query);
      } catch (error) {
        if (error instanceof GrepQueryError) return errorResult(`Grep: ${error.message}`);
        if (ctx.signal.aborted) return errorResult('Grep was cancelled.');
        throw error;
      }
      const formatted = await formatGrepHits(found.hits, {
        mode,
        cwd: ctx.cwd,
        lineNumbers: input['-n'] ?? true,
        contextLines: query.before + query.after > 0,
        multiline: query.multiline,
        headLimit: input.head_limit,
      });
      return { content: formatted.content, data: { backend: found.backend, mode, shown: formatted.shown, total: formatted.total } };
    }),
  });
}

/** Grep with ripgrep looked up on PATH. */
export const grepTool = createGrepTool();
