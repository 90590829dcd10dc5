import type { NewRun } from '../runtime/create-run.js';
import type { RunFlags } from './run-flags.js';

/** What the run flags say about a new run's RunSpec (the surface and model are the caller's). */
export function cliRunSpec(flags: RunFlags, cwd: string): Omit<NewRun, 'surface' | 'model'> {
  return {
    cwd,
    ...(flags.baseUrl ? { baseUrl: flags.baseUrl } : {}),
    mode: flags.batch ? 'batch' : flags.nonInteractive ? 'non-interactive' : 'interactive',
    ...(flags.nonInteractive ? { autoResponse: flags.auto ?? 'deny' } : {}),
    ...(flags.permissionMode ? { permissionMode: flags.permissionMode } : {}),
    rules: [
      ...flags.deny.map((rule) => ({ behavior: 'deny' as const, rule, source: 'cli' })),
      ...flags.ask.map((rule) => ({ behavior: 'ask' as const, rule, source: 'cli' })),
      ...flags.allow.map((rule) => ({ behavior: 'allow' as const, rule, source: 'cli' })),
    ],
    ...(flags.ignoreBrokenSettings ? { ignoreBrokenSettings: true } : {}),
    ...(flags.maxSteps ? { maxSteps: flags.maxSteps } : {}),
    ...(flags.interactionTimeout ? { interactionTimeoutMs: flags.interactionTimeout * 1000 } : {}),
  };
}
