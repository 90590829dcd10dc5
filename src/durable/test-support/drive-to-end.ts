import type { Store } from '../../store/index.js';
import type { DurableRunner } from '../durable-runner.js';
import { answerFor } from './scenario.js';

/**
 * Plays the person and the operator until the run finishes: recovers it when its owner died,
 * answers each pending request from the store (as `sage respond` would), waits for the resumed run.
 */
export async function driveToEnd(runner: DurableRunner, store: Store, runId: string, options: { maxRounds?: number } = {}): Promise<void> {
  for (let round = 0; round < (options.maxRounds ?? 60); round++) {
    // Settling a suspension may resume the run again here (an answer landed meanwhile): follow it.
    for (let live = runner.handle(runId); live; live = runner.handle(runId)) await live.outcome;
    const run = await store.getRun(runId);
    if (!run) throw new Error(`run ${runId} vanished`);
    if (['completed', 'failed', 'cancelled', 'max_steps'].includes(run.status)) return;
    const pending = await store.listInteractions({ runId, status: ['pending'] });
    if (run.status === 'running') {
      // Its owner died: wait out the lease, then take it over.
      const until = run.leaseExpiresAt ? Date.parse(run.leaseExpiresAt) : 0;
      if (until >= Date.now()) await new Promise((r) => setTimeout(r, until - Date.now() + 5));
      await runner.recover();
      continue;
    }
    if (pending.length === 0) {
      await runner.recover();
      continue;
    }
    for (const interaction of pending) await runner.respond(interaction.id, answerFor(interaction));
  }
  throw new Error(`run ${runId} did not finish`);
}
