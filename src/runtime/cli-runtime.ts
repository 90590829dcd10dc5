import { homedir } from 'node:os';
import type { Model } from '../model/types.js';
import type { PermissionGate } from '../permission/types.js';
import type { RunRecord, Store } from '../store/index.js';
import type { DurableRuntime } from './runtime.js';
import { storeUserPermissions } from './user-permission-adapter.js';

/**
 * What `sage run --detach` keeps of its command line in the run's `options.metadata.cli`, so that
 * any process resuming the run rebuilds the same permission engine (the rules and the mode; the
 * settings files are read again for the run's cwd).
 */
export interface CliRunMetadata {
  allow?: string[];
  ask?: string[];
  deny?: string[];
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'dontAsk';
  baseUrl?: string;
  /**
   * A one-task run (`sage run`): when the model gives its final text the run ends; the loop's
   * "next message" ask is answered empty by the CLI. False for a conversation that goes on.
   */
  oneShot?: boolean;
}

export function cliMetadataOf(run: RunRecord): CliRunMetadata {
  const metadata = (run.options as { metadata?: { cli?: CliRunMetadata } }).metadata;
  return metadata?.cli ?? {};
}

/**
 * The runtime the CLI resumes durable runs with (`sage runs resume`, `sage respond`, `sage runs
 * recover`, `sage run --detach`): the model from its stored spec through `resolveModel` (wrapped in
 * retries for real providers), the built-in tools, and the permission engine of the run's cwd —
 * settings files, the rules given on the command line, and the per-user rules in the store.
 */
export function cliRuntime(store: Store, options: { home?: string } = {}): DurableRuntime {
  const home = options.home ?? process.env.SAGE_HOME ?? homedir();
  let toolsPromise: Promise<readonly import('../tool/types.js').Tool[]> | undefined;
  return {
    async createModel(spec: string, run: RunRecord): Promise<Model> {
      const { resolveModel } = await import('../model/resolve-model.js');
      const baseUrl = cliMetadataOf(run).baseUrl;
      const model = resolveModel(spec, baseUrl ? { baseUrl } : {});
      if (model.id.startsWith('scripted:')) return model;
      const { withRecovery } = await import('../model/recovery/with-recovery.js');
      return withRecovery(model, {});
    },
    tools: () => (toolsPromise ??= import('../tool/builtin/index.js').then((m) => m.builtinTools())),
    async createGate(run: RunRecord): Promise<PermissionGate> {
      if (run.channel === 'web') {
        // A run started through the server keeps the server's gate when the CLI resumes it (sage
        // respond, sage runs resume): its stored request and policy lists, the host's server policy,
        // "always" answers to the per-user rules. Never the CLI's settings-file gate.
        const [{ createWebGate }, { resolveServerPolicy }] = await Promise.all([import('../server/web-gate.js'), import('../server/server-policy.js')]);
        const engine = await createWebGate(store, run, { serverPolicy: resolveServerPolicy({ env: { ...process.env, SAGE_HOME: home } }), home });
        await engine.ready();
        return engine;
      }
      const { createPermissionEngine, loadSettings, rulesFromLists } = await import('../permission/index.js');
      const cwd = (run.options as { cwd?: string }).cwd ?? process.cwd();
      const cli = cliMetadataOf(run);
      const settings = loadSettings({ projectRoot: cwd, home });
      const rules = rulesFromLists(cli, 'cli');
      const engine = createPermissionEngine({
        settings,
        home,
        rules,
        projectRoot: cwd,
        additionalDirectories: settings.additionalDirectories,
        userStore: storeUserPermissions(store),
        ...(cli.permissionMode ? { mode: cli.permissionMode } : {}),
      });
      await engine.ready();
      return engine;
    },
  };
}
