import type { RunView } from './types';

/**
 * The words the runs list shows for a run: its stored status, told apart by what it waits for — a
 * run blocked on an ask is "waiting for approval" (or "waiting for an answer") whether it waits in
 * memory (`running`) or was released (`suspended`); `idle` answered and waits for the next message.
 */
export function runStatusLabel(run: Pick<RunView, 'status' | 'waitingFor'>): { status: string; label: string } {
  if ((run.status === 'running' || run.status === 'suspended') && run.waitingFor === 'approval') return { status: 'waiting', label: 'waiting for approval' };
  if ((run.status === 'running' || run.status === 'suspended') && run.waitingFor === 'question') return { status: 'waiting', label: 'waiting for an answer' };
  if (run.status === 'max_steps') return { status: 'max_steps', label: 'stopped at step limit' };
  return { status: run.status, label: run.status };
}
