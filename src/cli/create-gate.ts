import { minimalGate } from '../permission/minimal-gate.js';
import type { PermissionGate } from '../permission/types.js';
import type { RunFlags } from './run-flags.js';

/** The permission gate for a CLI run. */
export async function createGate(_flags: RunFlags, _cwd: string): Promise<PermissionGate> {
  return minimalGate;
}
