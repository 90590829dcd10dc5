import { randomUUID } from 'node:crypto';
import type { PermissionGate } from '../permission/types.js';
import type { RunRecord, Store } from '../store/index.js';
import { createRunFactory } from './create-run.js';
import type { RunRequest } from './run-request.js';
import { resolveServerPolicy } from './server-policy.js';
import { isServerGated } from './surfaces.js';
import { serverGatedRequest } from './web-gate.js';

/**
 * The gate a new run admitted with `request` gets, built by the run factory as for any run of its
 * surface (`sage permissions check` answers with it, so its answer is the run's). A server-gated
 * request that brings no grant is a plain user's under the host's policy, as a web client's run
 * would be. The run is stored in `store`: give an in-memory one to keep nothing.
 */
export async function gateOfRequest(request: RunRequest, options: { store: Store; home: string; userId: string }): Promise<{ gate: PermissionGate; run: RunRecord }> {
  const { store, home, userId } = options;
  const serverPolicy = isServerGated(request.surface) ? resolveServerPolicy({ env: { ...process.env, SAGE_HOME: home } }) : undefined;
  // The gate does not depend on the tools: none are loaded (the check stays quick).
  const factory = createRunFactory({ store, home, tools: () => [], ...(serverPolicy ? { server: { policy: serverPolicy } } : {}) });
  const admitted = serverPolicy && !request.server ? { ...request, ...serverGatedRequest({ permissionMode: request.permissionMode ?? 'default', role: 'user' }, serverPolicy), rules: request.rules ?? [] } : request;
  const { channel, ...stored } = await factory.admitRun(admitted);
  const id = `run_check_${randomUUID()}`;
  const run = await store.createRun({ id, userId, sessionId: id, channel: channel ?? 'sdk', task: request.task, options: stored }, null);
  return { gate: await factory.createGate!(run), run };
}
