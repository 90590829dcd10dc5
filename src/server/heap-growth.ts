import { setFlagsFromString } from 'node:v8';

/**
 * How far V8's old generation may grow past what survived its last full collection before it
 * collects again, in percent, for `sage serve`.
 *
 * Why a server sets it: V8 picks that factor from the heap's size limit, and on a machine with a
 * few GiB of memory (a limit ≥ 2 GiB) it is 4×: a server whose live heap is 60 MB lets garbage
 * pile up to ~240 MB before a full collection. A server holding runs that wait for people is
 * exactly that (bench/channels.ts, 1,000 chats waiting on the fake Telegram API, load 3–5: peak RSS
 * 295–325 MB with V8's own factor, 220–227 MB at 15%, 232–246 MB at 30%; CPU per tap 5.2–6.1 ms
 * vs 5.5–5.6 ms: no cost visible above the noise). 0 leaves V8's own.
 */
export const SERVER_HEAP_GROWTH_PERCENT = 15;

/**
 * Sets V8's `--heap-growing-percent` in this process. The flag is read at every full collection
 * (when V8 computes the next limit), so setting it at start takes effect for the whole life of
 * the process; the heap's size limit, the young generation and everything else are unchanged.
 */
export function limitHeapGrowth(percent: number): void {
  if (!Number.isInteger(percent) || percent < 0 || percent > 300) throw new RangeError(`heap growth is a whole percent from 0 to 300, not ${percent}`);
  if (percent > 0) setFlagsFromString(`--heap-growing-percent=${percent}`);
}
