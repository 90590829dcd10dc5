import { describe, expect, it } from 'vitest';
import { EventQueue } from './event-queue.js';

async function drain(queue: EventQueue<number>, n: number): Promise<number[]> {
  const out: number[] = [];
  const it = queue[Symbol.asyncIterator]();
  for (let i = 0; i < n; i++) out.push((await it.next()).value as number);
  return out;
}

describe('EventQueue', () => {
  it('keeps every event for an iterator that comes late, by default', async () => {
    const queue = new EventQueue<number>();
    for (let i = 0; i < 5000; i++) queue.push(i);
    const got = await drain(queue, 5000);
    expect(got[0]).toBe(0);
    expect(got[4999]).toBe(4999);
  });

  it('with an unread limit, keeps only the newest events while nobody iterates (never fewer than the limit)', async () => {
    const queue = new EventQueue<number>(100);
    for (let i = 0; i < 1000; i++) queue.push(i);
    queue.close();
    const got: number[] = [];
    for await (const n of queue) got.push(n);
    expect(got.length).toBeGreaterThanOrEqual(100);
    expect(got.length).toBeLessThan(200);
    expect(got[got.length - 1]).toBe(999);
    expect(got).toEqual(Array.from({ length: got.length }, (_, i) => 1000 - got.length + i));
  });

  it('with an unread limit, drops nothing once someone iterates', async () => {
    const queue = new EventQueue<number>(10);
    const it = queue[Symbol.asyncIterator]();
    for (let i = 0; i < 500; i++) queue.push(i);
    const got: number[] = [];
    for (let i = 0; i < 500; i++) got.push((await it.next()).value as number);
    expect(got).toEqual(Array.from({ length: 500 }, (_, i) => i));
  });

  it('with an unread limit of 0, keeps nothing while nobody iterates, and everything once someone does', async () => {
    const queue = new EventQueue<number>(0);
    for (let i = 0; i < 50; i++) queue.push(i);
    const it = queue[Symbol.asyncIterator]();
    for (let i = 50; i < 60; i++) queue.push(i);
    queue.close();
    const got: number[] = [];
    for (let r = await it.next(); !r.done; r = await it.next()) got.push(r.value);
    expect(got).toEqual(Array.from({ length: 10 }, (_, i) => 50 + i));
  });
});
