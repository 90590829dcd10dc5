import { SageError } from '../errors/index.js';
import type { RunRecord } from '../store/index.js';
import type { RunRequest } from './run-request.js';
import { ruleLists, runSpecOf } from './run-spec.js';
import type { ServerPolicy } from './server-policy.js';
import { checkSettings } from './settings-check.js';
import { subagentOf } from './subagent-of.js';
import { SURFACES } from './surfaces.js';

/**
 * The host's settings files for a server run's folder do not load: no run starts there (fail
 * closed). The message is for the client; the file, line and field (the cause) are the operator's.
 */
export class HostSettingsError extends SageError {
  constructor(options?: { cause?: unknown }) {
    super('settings_invalid', 'The host settings files for this directory do not load, so no run starts here (fail closed); the operator must fix them.', options);
  }
}

/** What the checks before a run starts need from the process admitting it. */
export interface AdmissionContext {
  /** The server's policy: the host's settings of server-gated surfaces are read through it. */
  serverPolicy?: ServerPolicy;
  /** `~` of the settings read; default SAGE_HOME, then the OS home. */
  home?: string;
}

/**
 * The checks a new run passes before it is stored, as its surface's row of SURFACES lists them,
 * whichever way it came in (the CLI, `--detach`, the server, a chat channel). A surface calls this
 * as soon as it knows the run's folder, rules and agent, so a refusal comes before anything else.
 */
export async function checkBeforeStart(
  request: Pick<RunRequest, 'surface' | 'cwd' | 'projectRoot' | 'rules' | 'ignoreBrokenSettings' | 'agent'>,
  context: AdmissionContext = {},
): Promise<void> {
  for (const check of SURFACES[request.surface].checks) {
    if (check === 'settings') {
      // The person's files and typed rules, said here with file, line and field (exit 2).
      const typed = ruleLists(request.rules ?? [], 'cli');
      await checkSettings({ ...typed, ignoreBrokenSettings: request.ignoreBrokenSettings === true }, request.cwd, { report: true, ...(context.home ? { home: context.home } : {}) });
    } else if (check === 'host settings') {
      // Their deny rules apply to the run: a file that does not load refuses it before it exists.
      if (!context.serverPolicy?.settings) continue;
      const upTo = request.projectRoot;
      try {
        await checkSettings({ allow: [], ask: [], deny: [] }, request.cwd, { report: false, ...(context.home ? { home: context.home } : {}), ...(upTo ? { upTo } : {}) });
      } catch (error) {
        throw new HostSettingsError({ cause: error });
      }
    } else if (check === 'agent' && request.agent) {
      // No sandbox here and it is not off: refused before the run is stored, naming the package.
      const { requireSandbox } = await import('../agents/resolve-agent.js');
      await requireSandbox(request.agent);
    }
  }
}

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
