import { describe, expect, it } from 'vitest';
import { InteractionBroker } from '../interaction/index.js';
import { RunStop, StopSignal } from './run-context.js';

describe('RunStop', () => {
  it('tells each listener once, in order, skipping one removed meanwhile', () => {
    const stop = new RunStop();
    const told: string[] = [];
    const c = () => told.push('c');
    stop.addEventListener('abort', () => {
      told.push('a');
      stop.removeEventListener('abort', c);
    });
    stop.addEventListener('abort', () => told.push('b'));
    stop.addEventListener('abort', c);
    stop.aborted = true;
    stop.reason = { kind: 'suspend', reason: 'released' };
    stop.notify();
    stop.notify();
    expect(told).toEqual(['a', 'b']);
  });

  it('detaches a broker ask on a suspension and cancels it on a cancel, as an AbortSignal does', async () => {
    for (const reason of [{ kind: 'suspend', reason: 'released' }, { kind: 'cancel', reason: 'stop' }] as const) {
      const broker = new InteractionBroker();
      const stop = new RunStop();
      const outcome = broker.open({ kind: 'confirm', title: 'ok?' }, { runId: 'r', signal: stop });
      const id = broker.pending()[0]!.id;
      stop.aborted = true;
      stop.reason = reason;
      stop.notify();
      await expect(outcome).resolves.toMatchObject({ status: 'cancelled', reason: reason.kind === 'suspend' ? 'the run was suspended' : 'the run was cancelled' });
      // Detached: forgotten here (the store keeps it open); cancelled: kept, and no longer pending.
      expect(broker.get(id)?.status).toBe(reason.kind === 'suspend' ? undefined : 'cancelled');
    }
  });

  it('an ask opened after the stop is cancelled at once', async () => {
    const stop = new RunStop();
    stop.aborted = true;
    stop.reason = { kind: 'cancel', reason: 'stop' };
    await expect(new InteractionBroker().open({ kind: 'confirm', title: 'ok?' }, { runId: 'r', signal: stop })).resolves.toMatchObject({ status: 'cancelled' });
  });
});

describe('StopSignal', () => {
  it('is an Error with its reason and no stack frames, and leaves Error.stackTraceLimit as it was', () => {
    const limit = Error.stackTraceLimit;
    const signal = new StopSignal({ kind: 'suspend', reason: 'released' });
    expect(signal).toBeInstanceOf(Error);
    expect(signal.message).toBe('suspend');
    expect(signal.reason).toEqual({ kind: 'suspend', reason: 'released' });
    expect(signal.stack?.split('\n').filter((l) => l.trim().startsWith('at '))).toEqual([]);
    expect(Error.stackTraceLimit).toBe(limit);
    expect(new Error('x').stack).toMatch(/\n\s+at /);
  });
});
