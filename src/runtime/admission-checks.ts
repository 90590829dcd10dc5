import type { RunRecord } from '../store/index.js';
import { ruleLists, runSpecOf } from './run-spec.js';
import { checkSettings } from './settings-check.js';
import { subagentOf } from './subagent-of.js';
import { SURFACES } from './surfaces.js';

/**
 * Before a stored run is resumed in this process (`sage runs resume`, `sage respond`): a run with the
 * settings gate is rebuilt from the settings files of its folder and its stored rules, so a file
 * that does not load stops here, before an answer is stored or a step runs. A run with the server's
 * gate has its host settings checked by the factory as that gate is built.
 */
export async function checkBeforeResume(run: RunRecord, options: { ignoreBrokenSettings?: boolean } = {}): Promise<void> {
  const spec = runSpecOf(run);
  const surface = subagentOf(run)?.rootSurface ?? spec.surface;
  if (SURFACES[surface].gate !== 'settings') return;
  const ignoreBrokenSettings = spec.ignoreBrokenSettings || options.ignoreBrokenSettings === true;
  await checkSettings({ ...ruleLists(spec.rules, 'cli'), ignoreBrokenSettings }, spec.cwd, { report: true });
}
