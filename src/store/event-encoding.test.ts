import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../events/index.js';
import { decodeEvents, encodeEvents } from './queries/writes.js';

/** encodeEvents as it was (schema v7): a sorted copy, a parse and a format per distinct time. */
function encodeEventsBefore(events: readonly RunEvent[]): string {
  const sorted = [...events].sort((a, b) => a.seq - b.seq);
  let clock = 0;
  let last: string | undefined;
  return JSON.stringify(
    sorted.map((e) => {
      if (e.at === last) return [e.seq, e.type, 0, e.data ?? null];
      const ms = Date.parse(e.at);
      if (!Number.isFinite(ms) || new Date(ms).toISOString() !== e.at) return [e.seq, e.type, e.at, e.data ?? null];
      const since = ms - clock;
      clock = ms;
      last = e.at;
      return [e.seq, e.type, since, e.data ?? null];
    }),
  );
}

/** A seeded generator, so that a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ODD_TIMES = [
  'not a time',
  '',
  '2026-11-26T14:55:49Z',
  '2026-11-26T14:55:49.1Z',
  '2026-11-26T14:55:49.123+00:00',
  '2026-11-26T14:55:49.12xZ',
  '2026-11-26T14:55:49.123z',
  '2026-02-30T10:00:00.000Z',
  '2026-11-26T24:00:00.000Z',
  '2026-11-26 14:55:49.123Z',
  '+012026-11-26T14:55:49.123Z',
  '-000001-01-01T00:00:00.000Z',
  '1969-12-31T23:59:59.999Z',
  '1970-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
  '9999-12-31T23:59:59.999Z',
  'Thu, 26 Nov 2026 14:55:49 GMT',
  '2026-11-26T14:55:49.123Z ',
];

function batch(rand: () => number, base: number): RunEvent[] {
  const n = 1 + Math.floor(rand() * 14);
  let ms = base + Math.floor(rand() * 5000) - 2500;
  const events: RunEvent[] = [];
  for (let i = 0; i < n; i++) {
    const r = rand();
    let at: string;
    if (r < 0.1) at = ODD_TIMES[Math.floor(rand() * ODD_TIMES.length)]!;
    else {
      // Mostly the same millisecond (the same string or an equal one), sometimes later, earlier or in another second.
      const step = rand();
      if (step > 0.6) ms += step > 0.95 ? 1000 + Math.floor(rand() * 3000) : step > 0.9 ? -Math.floor(rand() * 1500) : Math.floor(rand() * 400);
      at = rand() < 0.5 ? new Date(ms).toISOString() : `${new Date(ms).toISOString()}`.slice(0);
    }
    const data = rand() < 0.15 ? undefined : rand() < 0.5 ? { step: i, toolCalls: 1 } : { toolCallId: `call_${i}`, toolName: 'echo', content: `ok ${i} "é" 🙂`, durationMs: rand() };
    events.push({ seq: 100 + i, runId: 'run_x', type: rand() < 0.5 ? 'step.started' : 'tool.completed', at, data } as RunEvent);
  }
  // Out of seq order now and then (and seqs with gaps).
  if (rand() < 0.3) events.sort(() => rand() - 0.5);
  if (rand() < 0.2) for (const e of events) (e as { seq: number }).seq += Math.floor(rand() * 50);
  return events;
}

describe('encodeEvents', () => {
  it('writes the same text as before for many batches, and decodeEvents reads them back', () => {
    const rand = random(7);
    const bases = [Date.UTC(2026, 10, 26, 14, 55, 49, 998), Date.UTC(1969, 11, 31, 23, 59, 59, 500), Date.UTC(9999, 11, 31, 23, 59, 58), 0, Date.UTC(2026, 0, 1)];
    for (let i = 0; i < 5000; i++) {
      const events = batch(rand, bases[i % bases.length]!);
      const text = encodeEvents(events);
      expect(text).toBe(encodeEventsBefore(events));
      const sorted = [...events].sort((a, b) => a.seq - b.seq);
      expect(decodeEvents(text, 'run_x')).toEqual(sorted.map((e) => ({ ...e, data: e.data ?? null })));
    }
  });

  it('does not take a time for the second of the one before it when its own is different', () => {
    // The first time sets the second known; a later one with the same digits in another second, a
    // one-character change before the dot, or no time parsed yet must not count from it.
    const at = ['2026-11-26T14:55:49.123Z', '2026-11-26T14:55:48.123Z', '2026-11-26T14:55:49.999Z', '2026-11-26T14:56:49.000Z', '2026-12-26T14:55:49.500Z', 'x026-11-26T14:55:49.500Z'];
    const events = at.map((t, i) => ({ seq: i + 1, runId: 'r', type: 'step.started', at: t, data: { step: i } }) as RunEvent);
    for (let i = 0; i < events.length; i++) {
      const text = encodeEvents(events.slice(i));
      expect(text).toBe(encodeEventsBefore(events.slice(i)));
      expect(decodeEvents(text, 'r').map((e) => e.at)).toEqual(at.slice(i));
    }
  });

  it('leaves an out-of-order batch as it was given (sorts a copy)', () => {
    const at = new Date(Date.UTC(2026, 10, 26)).toISOString();
    const events = [3, 1, 2].map((seq) => ({ seq, runId: 'r', type: 'step.started', at, data: { step: seq } }) as RunEvent);
    expect(JSON.parse(encodeEvents(events)).map((row: unknown[]) => row[0])).toEqual([1, 2, 3]);
    expect(events.map((e) => e.seq)).toEqual([3, 1, 2]);
  });
});
