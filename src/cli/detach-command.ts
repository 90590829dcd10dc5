import { UsageError } from './usage-error.js';
import type { RunFlags } from './run-flags.js';

/** `sage run --detach`: needs the durable store. */
export async function detachCommand(_task: string, _flags: RunFlags, _cwd: string): Promise<number> {
  throw new UsageError('--detach needs the durable store, which this build does not include yet.');
}
