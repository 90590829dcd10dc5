import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const CACHE_FILE = path.join(REPO_ROOT, 'test/claude-code-differential/claude-code-decisions.json');

/** The exact version package.json pins for @anthropic-ai/claude-code (a range is refused: the cache needs one version). */
export function pinnedClaudeCodeVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as { devDependencies?: Record<string, string> };
  const spec = pkg.devDependencies?.['@anthropic-ai/claude-code'];
  if (!spec || !/^\d+\.\d+\.\d+$/.test(spec)) {
    throw new Error(`package.json must pin @anthropic-ai/claude-code to an exact version (found ${spec ?? 'nothing'}).`);
  }
  return spec;
}
