import { stat } from 'node:fs/promises';
import path from 'node:path';
import picomatch from 'picomatch';
import { z } from 'zod';
import { defineTool } from '../types.js';
import { describeFsError } from './support/fs-error.js';
import { errorResult, guardedExecute } from './support/guarded-execute.js';
import { displayPath, resolvePath } from './support/resolve-path.js';
import { statIfExists } from './support/stat-if-exists.js';
import { comparePaths, walkFiles } from './support/walk-files.js';

/** More paths than this rarely help the model; it should narrow the pattern instead. */
export const GLOB_MAX_RESULTS = 100;

const inputSchema = z.object({
  pattern: z.string().min(1, 'pattern must not be empty'),
  path: z.string().optional(),
});

export type GlobInput = z.infer<typeof inputSchema>;

/** True when `dir` (relative) lies on the way to `base` or inside it: only those can match. */
function onPathTo(base: string, dir: string): boolean {
  return base === '' || dir === base || base.startsWith(`${dir}/`) || dir.startsWith(`${base}/`);
}

/**
 * Glob: files whose path (relative to `path`, default the working directory) matches a glob
 * pattern, newest first, respecting .gitignore and skipping .git and node_modules.
 */
export const globTool = defineTool({
  name: 'Glob',
  description: `Find files by glob pattern (e.g. "**/*.ts", "src/**/*.{ts,tsx}", "*.json"), relative to \`path\` (default the working directory). Respects .gitignore; skips .git and node_modules. Returns matching file paths, most recently modified first, at most ${GLOB_MAX_RESULTS}.`,
  inputSchema,
  risk: 'LOW',
  readOnly: true,
  permissionResource: (input, ctx) => resolvePath(ctx.cwd, typeof input?.path === 'string' ? input.path : '.'),
  execute: guardedExecute('Glob', inputSchema, async (input, ctx) => {
    let root = resolvePath(ctx.cwd, input.path ?? '.');
    let pattern = input.pattern;
    // An absolute pattern carries its own root: walk from its static part.
    if (path.isAbsolute(pattern)) {
      const scanned = picomatch.scan(pattern);
      root = scanned.base;
      pattern = scanned.glob === '' ? path.basename(pattern) : scanned.glob;
      if (scanned.glob === '') root = path.dirname(scanned.base);
    }
    let info;
    try {
      info = await statIfExists(root);
    } catch (error) {
      return errorResult(`Cannot search ${root}: ${describeFsError(error, root)}`);
    }
    if (!info) return errorResult(`Directory does not exist: ${root}. The working directory is ${ctx.cwd}.`);
    if (!info.isDirectory()) return errorResult(`${root} is a file, not a directory; give a directory as path.`);

    const isMatch = picomatch(pattern, { dot: true });
    const base = picomatch.scan(pattern).base;
    let walked;
    try {
      walked = await walkFiles({ root, signal: ctx.signal, enterDir: (dir) => onPathTo(base, dir) });
    } catch (error) {
      return errorResult(`Cannot search ${root}: ${describeFsError(error, root)}`);
    }
    if (ctx.signal.aborted) return errorResult('Glob was cancelled.');
    const matches = walked.files.filter((file) => isMatch(file.relativePath));
    if (matches.length === 0) return { content: `No files found matching "${input.pattern}" in ${root}.`, data: { total: 0 } };

    const mtimes = await Promise.all(matches.map((file) => stat(file.path).then((s) => s.mtimeMs, () => 0)));
    const ordered = matches
      .map((file, i) => ({ path: file.path, mtime: mtimes[i]! }))
      .sort((a, b) => b.mtime - a.mtime || comparePaths(a.path, b.path));
    const shown = ordered.slice(0, GLOB_MAX_RESULTS).map((file) => displayPath(ctx.cwd, file.path));
    const note =
      ordered.length > GLOB_MAX_RESULTS
        ? `\n[Showing the ${GLOB_MAX_RESULTS} most recently modified of ${ordered.length} matches. Use a narrower pattern or path to see others.]`
        : '';
    return { content: shown.join('\n') + note, data: { total: ordered.length, shown: shown.length } };
  }),
});
