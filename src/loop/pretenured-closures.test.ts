import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * V8 allocates a function literal assigned straight to a property (`x.y = () => …`, `x.y = function`)
 * in the old generation: its parser takes it for a method set up once (CheckAssigningFunctionLiteralToProperty).
 * Made per run or per ask, such a closure dies young but stays in old space until the next full GC,
 * and everything it captures (a run: its loop, broker, recorder, messages) survives every scavenge
 * meanwhile and is promoted. On the approval cycle of bench/durable.ts three of them (the broker's
 * per-ask cleanup, the loop's and the durable runner's broker listeners) kept ~12% of the bytes
 * allocated alive past each scavenge; made as locals first, 0.8%. This test keeps the pattern out
 * of the folders whose objects live per run.
 */
const src = fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['loop', 'interaction', 'durable', 'events'];
/** A worker's gate hooks: one per external-agent run or decision, not on the approval cycle; left as they were. */
const KNOWN: Record<string, number> = { 'loop/worker.ts': 2 };

/** `<property> = <function literal>`, a plain `=` (not `==`, `=>`, `<=`, `!=` …). */
const PROPERTY_GETS_LITERAL = /(?:\]|\.[\w$#]+)\s*(?<![=!<>])=(?![=>])\s*\(?\s*(?:async\s+)?(?:function\b|\([^()]*\)\s*(?::[^=;{}()]+)?=>|[\w$]+\s*=>)/g;

function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

function sources(folder: string): string[] {
  return readdirSync(join(src, folder), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts') && !f.includes('test-support'))
    .map((f) => `${folder}/${f}`);
}

describe('closures made per run are not assigned straight to a property', () => {
  it('finds the pattern (the check itself)', () => {
    const hits = (code: string) => withoutComments(code).match(PROPERTY_GETS_LITERAL)?.length ?? 0;
    expect(hits('entry.cleanup = () => {};')).toBe(1);
    expect(hits('this.broker.onEvent = (event) => {};')).toBe(1);
    expect(hits('broker.onEvent = (event: BrokerEvent) => {};')).toBe(1);
    expect(hits('gate.decide = ((call, context) => call) as X;')).toBe(1);
    expect(hits('x.y = async function () {};')).toBe(1);
    expect(hits('x[k] = v => v;')).toBe(1);
    expect(hits('const onEvent = (event) => {};\nthis.broker.onEvent = onEvent;')).toBe(0);
    expect(hits('if (a.b === (c) => c) {}')).toBe(0);
    expect(hits('x.y = f(() => 1);')).toBe(0);
    expect(hits('// entry.cleanup = () => {}')).toBe(0);
  });

  it('in src/loop, src/interaction, src/durable and src/events', () => {
    const found: Record<string, number> = {};
    for (const folder of FOLDERS) {
      for (const file of sources(folder)) {
        const n = withoutComments(readFileSync(join(src, file), 'utf8')).match(PROPERTY_GETS_LITERAL)?.length ?? 0;
        if (n > 0) found[file] = n;
      }
    }
    expect(found).toEqual(KNOWN);
  });
});
