import { setFlagsFromString } from 'node:v8';

/**
 * How far V8's old generation may grow past what survived its last full collection before it
 * collects again, in percent, for `sage serve`.
 *
 * Why a server sets it: V8 picks that factor from the heap's size limit, and on a machine with a
 * few GiB of memory (a limit ≥ 2 GiB) it is 4×: a server whose live heap is 60 MB lets garbage
 * pile up to ~240 MB before a full collection. A server holding runs that wait for people is
 * exactly that: a lower factor cuts its peak memory at no CPU cost visible above the noise
 * (figures in bench/README.md). 0 leaves V8's own.
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

/**
 * The young generation of `sage serve`'s heap: each of its two semi-spaces at most this many MB
 * (V8's `--max-semi-space-size`), instead of the 16 MB V8 picks on a 64-bit machine with a few GiB.
 *
 * Why: the young generation is committed memory whatever is live in it, a large share of a
 * server's memory with many chats waiting on an approval; a smaller one costs no CPU visible above
 * the noise (figures in bench/README.md). Unlike
 * the heap growth this cannot be changed once V8 has set up the heap, so `sage serve` starts the
 * server in a Node process given the flag (src/cli/serve-process.ts).
 */
export const SERVER_SEMI_SPACE_MB = 4;

/** The largest `sage serve --young-generation` accepted, MB (V8's own default is 16 on 64-bit machines). */
export const YOUNG_GENERATION_MAX_MB = 64;

/** A `--young-generation` value: whole MB from 0 (V8's own) to YOUNG_GENERATION_MAX_MB, digits only; undefined otherwise. */
export function youngGenerationMb(value: string): number | undefined {
  const n = Number(value);
  return /^\d+$/.test(value) && n <= YOUNG_GENERATION_MAX_MB ? n : undefined;
}

/** Set in the environment of the server's child process: it stops when the process that started it is gone. */
export const SERVE_PARENT_ENV = 'SAGE_SERVE_PARENT';
