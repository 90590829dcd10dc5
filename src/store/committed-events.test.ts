import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../events/index.js';
import { attachCommittedEvents, committedEvents } from './committed-events.js';
import type { StoreNotification } from './types.js';

const batch = (): RunEvent[] => [{ seq: 3, runId: 'r', type: 'step.started', at: '2026-11-26T00:00:00.000Z', data: { step: 1 } } as RunEvent];

describe('committed events on a notification', () => {
  it('are decoded once, on first use, and travel with that object only', () => {
    const notification: StoreNotification = { type: 'events', runId: 'r', seq: 3, types: ['step.started'] };
    let decoded = 0;
    attachCommittedEvents(notification, () => (decoded++, batch()));
    expect(decoded).toBe(0);
    expect(committedEvents(notification)).toEqual(batch());
    expect(committedEvents(notification)).toBe(committedEvents(notification));
    expect(decoded).toBe(1);
    // What goes over the wire (Postgres NOTIFY) or gets copied carries none of it.
    expect(JSON.parse(JSON.stringify(notification))).toEqual({ type: 'events', runId: 'r', seq: 3, types: ['step.started'] });
    expect(Object.keys(notification)).toEqual(['type', 'runId', 'seq', 'types']);
    expect(committedEvents({ ...notification })).toBeUndefined();
  });

  it('are undefined for a notification this process did not write', () => {
    expect(committedEvents({ type: 'events', runId: 'r', seq: 1, types: [] })).toBeUndefined();
  });
});
