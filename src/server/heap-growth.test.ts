import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { limitHeapGrowth } from './heap-growth.js';

const module = fileURLToPath(new URL('./heap-growth.ts', import.meta.url));

/**
 * A process with ~100 MB live and objects that live long enough to reach the old generation, then
 * die (what runs waiting on people and the taps that end them look like to V8): its peak heap
 * after limitHeapGrowth(percent).
 */
function peakHeapMb(percent: number): number {
  const script = `
    const { limitHeapGrowth } = await import(${JSON.stringify(module)});
    limitHeapGrowth(${percent});
    const live = Array.from({ length: 200 }, () => Array.from({ length: 10_000 }, (_, i) => ({ i })));
    const ring = new Array(64).fill(null);
    let peak = 0;
    for (let round = 0; round < 3000; round++) {
      ring[round % 64] = Array.from({ length: 2_000 }, (_, i) => ({ i, s: 'x' + i }));
      if (round % 50 === 0) peak = Math.max(peak, process.memoryUsage().heapUsed);
    }
    console.log(JSON.stringify({ peak: peak / 2 ** 20, live: live.length }));`;
  const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8' });
  return (JSON.parse(out.trim().split('\n').at(-1)!) as { peak: number }).peak;
}

describe('limitHeapGrowth', () => {
  it('keeps garbage from piling up past the live heap: the peak is well under V8’s own', () => {
    const own = peakHeapMb(0);
    const limited = peakHeapMb(15);
    // Measured here: V8's own 168–378 MB, at 15% 125–128 MB, for ~100 MB live.
    expect(limited).toBeLessThan(own * 0.8);
  }, 60_000);

  it('refuses what is not a whole percent from 0 to 300', () => {
    expect(() => limitHeapGrowth(-1)).toThrow(/whole percent from 0 to 300/);
    expect(() => limitHeapGrowth(301)).toThrow(/whole percent/);
    expect(() => limitHeapGrowth(1.5)).toThrow(/whole percent/);
  });
});
