import type { RunRecord, Store } from '../store/index.js';
import { createRunFactory, type RunFactory, type RunFactoryOptions } from './create-run.js';

/**
 * What `sage run --detach` (version 1 RunSpecs) kept of its command line in `options.metadata.cli`.
 * New runs store their rules in the RunSpec itself (src/runtime/run-spec.ts reads both).
 */
export interface CliRunMetadata {
  allow?: string[];
  ask?: string[];
  deny?: string[];
  permissionMode?: 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions' | 'dontAsk';
  baseUrl?: string;
  /** A one-task run: when the model gives its final text the run ends. */
  oneShot?: boolean;
}

export function cliMetadataOf(run: RunRecord): CliRunMetadata {
  const metadata = (run.options as { metadata?: { cli?: CliRunMetadata } }).metadata;
  return metadata?.cli ?? {};
}

/**
 * The runtime the CLI drives durable runs with (`sage run`, `sage`, `sage runs resume|recover`,
 * `sage respond`, `sage run --detach`): the run factory of src/runtime, with no server policy of
 * its own (a web run resumed here gets the host's server policy, read from its settings).
 */
export function cliRuntime(store: Store, options: Omit<RunFactoryOptions, 'store'> = {}): RunFactory {
  return createRunFactory({ store, ...options });
}
