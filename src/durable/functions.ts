import type { Store } from '../store/index.js';
import { DurableRunner, type DurableRunHandle, type DurableRunnerOptions, type RecoverResult, type RespondResult, type StartOptions } from './durable-runner.js';
import type { DurableRuntime } from './runtime.js';

/** Options shared by the one-call helpers: the runtime and any runner setting. */
export type RunnerSettings = { runtime: DurableRuntime } & Omit<DurableRunnerOptions, 'store' | 'runtime'>;

/**
 * One runner per store and process: the helpers below share it, so an answer given in this
 * process reaches a run this process drives.
 */
const runners = new WeakMap<Store, DurableRunner>();
export function runnerFor(store: Store, settings: RunnerSettings): DurableRunner {
  let runner = runners.get(store);
  if (!runner) {
    runner = new DurableRunner({ store, ...settings });
    runners.set(store, runner);
  }
  return runner;
}

/** Starts a durable run and drives it here (`detach: true`: queue it for a server or `sage runs recover`). */
export async function startDurableRun(store: Store, task: string, options: StartOptions & RunnerSettings & { detach?: boolean }): Promise<{ runId: string; handle?: DurableRunHandle }> {
  const { runtime, instanceId, leaseMs, idleSuspendMs, maintenanceIntervalMs, autoRecover, flushDelayMs, detach, ...start } = options;
  const runner = runnerFor(store, { runtime, instanceId, leaseMs, idleSuspendMs, maintenanceIntervalMs, autoRecover, flushDelayMs });
  if (detach) return { runId: (await runner.enqueue(task, start)).id };
  const handle = await runner.start(task, start);
  return { runId: handle.runId, handle };
}

/** Resumes a suspended run (or one whose owner died) here, from its last checkpoint. */
export function resumeRun(store: Store, runId: string, settings: RunnerSettings): Promise<DurableRunHandle> {
  return runnerFor(store, settings).resume(runId);
}

/** Answers a stored request; the first valid answer wins and the run resumes (here, or on its live owner). */
export function respond(store: Store, interactionId: string, response: unknown, settings: RunnerSettings): Promise<RespondResult> {
  return runnerFor(store, settings).respond(interactionId, response);
}

/** Resumes every run left without a live driver, after applying expiry. */
export function recover(store: Store, settings: RunnerSettings): Promise<RecoverResult> {
  return runnerFor(store, settings).recover();
}
