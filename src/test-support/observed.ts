/**
 * What a real-program suite saw the program do (its model-API requests, the calls Sage recorded),
 * written to test/agents/observed/<program>.json when SAGE_RECORD_OBSERVED is set — by
 * `npm run agents:refresh`, which diffs it against the committed one after a version bump.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedProgram, type PinnedProgram } from './real-agents.js';

const folder = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'test', 'agents', 'observed');

export function recordObserved(program: PinnedProgram, behaviours: Record<string, unknown>): void {
  if (!process.env['SAGE_RECORD_OBSERVED']) return;
  const { version } = pinnedProgram(program);
  const sorted = Object.fromEntries(Object.entries(behaviours).sort(([a], [b]) => a.localeCompare(b)));
  mkdirSync(folder, { recursive: true });
  writeFileSync(join(folder, `${program}.json`), `${JSON.stringify({ program, version, behaviours: sorted }, null, 2)}\n`);
}
