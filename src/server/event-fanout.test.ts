import Database from 'better-sqlite3';
import { setMaxListeners } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import type { RunEvent } from '../events/index.js';
import { openSqliteStore } from '../store/open-store.js';
import type { SqlStore } from '../store/sql-store.js';
import type { Principal } from './auth.js';
import { followRunEvents } from './event-feed.js';
import { encodedFrame, formatEvent, keepAliveSlots, keepAliveSpread, keepAliveTimers, sseResponse } from './sse.js';
import { followUserEvents } from './user-event-feed.js';

const event = (runId: string, seq: number, type: RunEvent['type'] = 'step.started'): RunEvent => ({ seq, runId, type, at: new Date().toISOString(), data: { step: seq } }) as RunEvent;

/** Waits until `check` holds, polling every few ms (bounded: a broken feed fails, not hangs). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

let store: SqlStore;
beforeEach(async () => {
  store = await openSqliteStore(':memory:');
});
afterEach(async () => {
  await store.close();
});

async function newRun(id: string, userId = 'alice'): Promise<void> {
  await store.createRun({ id, userId, sessionId: 's', channel: 'web', task: 't', options: { model: 'scripted:x' } }, { id: 'A', leaseMs: 60_000 });
}

describe('many streams of one run', () => {
  test('a commit is read once for all of them, each gets every event, and the frame is encoded once', async () => {
    await newRun('r1');
    await store.write({ runId: 'r1', owner: 'A', events: [event('r1', 1), event('r1', 2)] });
    const abort = new AbortController();
    setMaxListeners(100, abort.signal);
    const seen: RunEvent[][] = Array.from({ length: 40 }, () => []);
    const done = seen.map(async (into) => {
      for await (const e of followRunEvents(store, 'r1', 0, abort.signal)) into.push(e);
    });
    // The first replay is each stream's own (it must see what was committed before it subscribed).
    await until(() => seen.every((s) => s.length === 2), 'the replay');
    // eslint-disable-next-line sage/no-fixed-sleep -- a read after the replay would be counted below; none is observable to wait for
    await new Promise((r) => setTimeout(r, 20));
    const reads = vi.spyOn(store, 'readEvents');
    await store.write({ runId: 'r1', owner: 'A', events: [event('r1', 3), event('r1', 4)] });
    await until(() => seen.every((s) => s.length === 4), 'the live events');
    // This process committed them: they came with the commit's notification, no read of the log.
    expect(reads).toHaveBeenCalledTimes(0);
    for (const s of seen) expect(s.map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    // The same objects, so one frame for all: the bytes are made once.
    expect(new Set(seen.map((s) => s[3]))).toHaveProperty('size', 1);
    const frame = encodedFrame(seen[0]![3]!, formatEvent);
    expect(encodedFrame(seen[39]![3]!, formatEvent)).toBe(frame);
    expect(new TextDecoder().decode(frame)).toBe(formatEvent(seen[0]![3]!));
    // The run finishes: every stream ends after the last event.
    await store.write({ runId: 'r1', owner: 'A', events: [event('r1', 5, 'run.completed')], run: { status: 'completed' } });
    await Promise.all(done);
    for (const s of seen) expect(s.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    reads.mockRestore();
  });

  test('a stream that subscribes while others share a read still gets what was committed before it', async () => {
    await newRun('r2');
    const abort = new AbortController();
    setMaxListeners(100, abort.signal);
    const early: RunEvent[] = [];
    const first = (async () => {
      for await (const e of followRunEvents(store, 'r2', 0, abort.signal)) early.push(e);
    })();
    await store.write({ runId: 'r2', owner: 'A', events: [event('r2', 1)] });
    const late: RunEvent[] = [];
    const second = (async () => {
      for await (const e of followRunEvents(store, 'r2', 0, abort.signal)) late.push(e);
    })();
    await store.write({ runId: 'r2', owner: 'A', events: [event('r2', 2)] });
    await until(() => early.length === 2 && late.length === 2, 'both streams');
    expect(late.map((e) => e.seq)).toEqual([1, 2]);
    abort.abort();
    await Promise.all([first, second]);
  });
});

describe('events pushed with their commit', () => {
  test('a batch another process wrote (no notification here) is read from the log before the next pushed one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sage-fanout-'));
    const here = await openSqliteStore(join(dir, 'db.sqlite'));
    // Another process's connection: stores of one file in this process share their notifications.
    const there = new Database(join(dir, 'db.sqlite'));
    try {
      await here.createRun({ id: 'rx', userId: 'alice', sessionId: 's', channel: 'web', task: 't', options: { model: 'scripted:x' } }, { id: 'A', leaseMs: 60_000 });
      const abort = new AbortController();
      const seen: number[] = [];
      const stream = (async () => {
        for await (const e of followRunEvents(here, 'rx', 0, abort.signal)) seen.push(e.seq);
      })();
      await here.write({ runId: 'rx', owner: 'A', events: [event('rx', 1)] });
      await until(() => seen.length === 1, 'the first event');
      const reads = vi.spyOn(here, 'readEvents');
      // A batch row as the store writes it (schema v6: [seq, type, at, data] per event).
      const at = new Date().toISOString();
      there.prepare('INSERT INTO run_events (run_id, first_seq, last_seq, events) VALUES (?, ?, ?, ?)').run('rx', 2, 3, JSON.stringify([[2, 'step.started', at, { step: 2 }], [3, 'step.started', at, { step: 3 }]]));
      await here.write({ runId: 'rx', owner: 'A', events: [event('rx', 4)] });
      await until(() => seen.length === 4, 'every event');
      expect(seen).toEqual([1, 2, 3, 4]);
      // The pushed batch (4) did not follow what the stream had (1): the log was read.
      expect(reads).toHaveBeenCalledTimes(1);
      await here.write({ runId: 'rx', owner: 'A', events: [event('rx', 5)] });
      await until(() => seen.length === 5, 'the next event');
      expect(reads).toHaveBeenCalledTimes(1);
      abort.abort();
      await stream;
    } finally {
      there.close();
      await here.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('user streams', () => {
  test("one owner lookup per run for all streams; each sees only its own user's runs, the same frame", async () => {
    const abort = new AbortController();
    setMaxListeners(100, abort.signal);
    const alice: Principal = { userId: 'alice', role: 'user' } as Principal;
    const bob: Principal = { userId: 'bob', role: 'user' } as Principal;
    const got = new Map<number, unknown[]>();
    const subscribed = vi.spyOn(store, 'subscribe');
    const streams = Array.from({ length: 30 }, (_, i) => {
      const into: unknown[] = [];
      got.set(i, into);
      return (async () => {
        for await (const e of followUserEvents(store, i % 2 === 0 ? alice : bob, abort.signal)) into.push(e);
      })();
    });
    // Every stream listens before the run is made.
    await until(() => subscribed.mock.results.length === 30, 'the streams to subscribe');
    await Promise.all(subscribed.mock.results.map((r) => r.value));
    subscribed.mockRestore();
    const lookups = vi.spyOn(store, 'getRun');
    await newRun('ra', 'alice');
    await store.write({ runId: 'ra', owner: 'A', events: [event('ra', 1)], run: { status: 'suspended', release: true } });
    await until(() => [...got].every(([i, e]) => (i % 2 === 0 ? e.length >= 1 : true)), "alice's streams");
    // eslint-disable-next-line sage/no-fixed-sleep -- negative check: no second lookup and nothing for bob's streams comes later
    await new Promise((r) => setTimeout(r, 20));
    expect(lookups).toHaveBeenCalledTimes(1);
    for (const [i, events] of got) {
      if (i % 2 === 1) expect(events).toEqual([]);
      else expect(events).toContainEqual({ type: 'run', runId: 'ra', status: 'suspended' });
    }
    expect(got.get(0)!.at(-1)).toBe(got.get(2)!.at(-1));
    lookups.mockRestore();
    abort.abort();
    await Promise.all(streams);
  });
});

describe('keep-alive', () => {
  test('one timer for all open streams, gone when they close; each stream gets the ping', async () => {
    expect(keepAliveTimers()).toBe(0);
    // A source that sends nothing until its stream ends.
    const never = (signal: AbortSignal): AsyncIterable<RunEvent> => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<RunEvent>>((resolve) => signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true })),
      }),
    });
    const responses = Array.from({ length: 20 }, () => sseResponse(never, { heartbeatMs: 30 }));
    expect(keepAliveTimers()).toBe(1);
    const readers = responses.map((r) => r.body!.getReader());
    const decoder = new TextDecoder();
    await Promise.all(
      readers.map(async (reader) => {
        let text = '';
        while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value);
      }),
    );
    await Promise.all(readers.map((reader) => reader.cancel()));
    expect(keepAliveTimers()).toBe(0);
  });

  test('streams are spread over slots pinged in turn, so a thousand never get their ping in the same tick', async () => {
    const never = (signal: AbortSignal): AsyncIterable<RunEvent> => ({
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise<IteratorResult<RunEvent>>((resolve) => signal.addEventListener('abort', () => resolve({ done: true, value: undefined }), { once: true })),
      }),
    });
    // The default interval (15 s): 60 slots, one pinged every 250 ms.
    expect(keepAliveSlots(15_000)).toBe(60);
    const idle = Array.from({ length: 1000 }, () => sseResponse(never, { heartbeatMs: 15_000 }).body!.getReader());
    expect(keepAliveTimers()).toBe(1);
    expect(keepAliveSpread(15_000)).toEqual(Array.from({ length: 60 }, (_, i) => (i < 40 ? 17 : 16)));
    // Streams that leave free their slot; the next ones fill the emptiest slots first.
    await Promise.all(idle.slice(0, 17).map((reader) => reader.cancel()));
    const again = Array.from({ length: 17 }, () => sseResponse(never, { heartbeatMs: 15_000 }).body!.getReader());
    expect(Math.max(...keepAliveSpread(15_000)) - Math.min(...keepAliveSpread(15_000))).toBeLessThanOrEqual(1);
    await Promise.all([...idle.slice(17), ...again].map((reader) => reader.cancel()));
    expect(keepAliveTimers()).toBe(0);

    // With several slots, every stream still gets its ping (600 ms: two slots, a tick every 300 ms).
    expect(keepAliveSlots(600)).toBe(2);
    const pinged = Array.from({ length: 4 }, () => sseResponse(never, { heartbeatMs: 600 }).body!.getReader());
    expect(keepAliveSpread(600)).toEqual([2, 2]);
    const decoder = new TextDecoder();
    await Promise.all(
      pinged.map(async (reader) => {
        let text = '';
        while (!text.includes(': keep-alive')) text += decoder.decode((await reader.read()).value);
      }),
    );
    await Promise.all(pinged.map((reader) => reader.cancel()));
    expect(keepAliveTimers()).toBe(0);
  });
});
