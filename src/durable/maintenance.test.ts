import { describe, expect, it } from 'vitest';
import { maintain } from './maintenance.js';
import type { RunnerState } from './runner-state.js';

// The maintenance pass renews its runs' leases in chunks; between two chunks the event loop turns,
// so what waits on I/O (an answer, a chat tap, an SSE write) is not held behind every chunk at once.
// With 1,000 runs waiting, the chunks run back to back held a server's loop ~60 ms every pass.

describe('maintain', () => {
  it('lets the event loop turn between lease-renewal chunks, and renews every run once', async () => {
    const order: string[] = [];
    const renewed: string[] = [];
    // 200 runs being rebuilt here (no live loop): four chunks of at most 64.
    const starting = new Map(Array.from({ length: 200 }, (_, i) => [`run_${i}`, Promise.resolve()]));
    const store = {
      // Settles at once, as a store whose commit is already durable: without a turn of the loop
      // between chunks, all four would run in one go of microtasks.
      renewLeases: async (_owner: string, ids: readonly string[]) => {
        order.push(`renew ${ids.length}`);
        renewed.push(...ids);
        return [...ids];
      },
      expireDue: async () => [],
    };
    const state = { closed: false, live: new Map(), starting, store, instanceId: 'A', leaseMs: 30_000, options: {} } as unknown as RunnerState;
    setImmediate(() => order.push('I/O turn'));
    await maintain(state);
    expect(order).toEqual(['renew 64', 'I/O turn', 'renew 64', 'renew 64', 'renew 8']);
    expect(new Set(renewed).size).toBe(200);
  });
});
