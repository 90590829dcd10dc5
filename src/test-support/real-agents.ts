/**
 * The pinned real agent programs (test/agents/pinned.json), installed by `npm run agents:install`.
 * A suite asks for a program's bin; when it is missing the suite is skipped locally with the install command
 * as the reason, and fails under CI, where .ci/run installs every program first.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: a plain .mjs shared with the install script, typed by its JSDoc only
import { programPrefix } from '../../scripts/agents-cache.mjs';

export type PinnedProgram = 'gemini-cli' | 'qwen-code' | 'codex' | 'server-everything' | 'server-filesystem';

interface ProgramEntry {
  readonly package: string;
  readonly version: string;
  readonly bin: string;
}

const manifestPath = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'agents', 'pinned.json');

export function pinnedProgram(name: PinnedProgram): ProgramEntry {
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as { programs: Record<string, ProgramEntry> };
  const entry = manifest.programs[name];
  if (!entry) throw new Error(`test/agents/pinned.json has no program "${name}"`);
  return entry;
}

/** The program's bin path when installed, else undefined. */
export function installedBin(name: PinnedProgram): string | undefined {
  const entry = pinnedProgram(name);
  const prefix = programPrefix(entry) as string;
  if (!existsSync(join(prefix, '.installed'))) return undefined;
  const bin = join(prefix, 'node_modules', '.bin', entry.bin);
  return existsSync(bin) ? bin : undefined;
}

/**
 * The bin for a suite, or undefined when the suite should be skipped (locally, not installed).
 * Under CI a missing program is an error: a skipped real-program suite there would hide a regression.
 */
export function binForSuite(name: PinnedProgram): string | undefined {
  const bin = installedBin(name);
  if (bin) return bin;
  const entry = pinnedProgram(name);
  const message = `${entry.package}@${entry.version} is not installed: run \`npm run agents:install\``;
  if (process.env['CI']) throw new Error(message);
  console.warn(`skipping: ${message}`);
  return undefined;
}
