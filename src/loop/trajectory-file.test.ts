import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { run } from './run.js';
import { collect, script } from './test-support/fixtures.js';

describe('a trajectory file that cannot be written', () => {
  // The stream's open fails asynchronously; unhandled, that 'error' killed the process after the
  // run's work was done (vitest fails a test on an unhandled error, so this run finishing is the check).
  it('does not crash the process: writing stops and the run completes with all its events', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'sage-trajectory-folder-'));
    const r = run('go', { model: script([{ text: 'finished' }]), mode: { type: 'batch' }, trajectoryPath: folder });
    const events = await collect(r);
    const outcome = await r.outcome;
    expect(outcome).toMatchObject({ status: 'completed', finalText: 'finished' });
    expect(events.map((e) => e.type)).toContain('run.completed');
    // Let the stream's delayed error surface inside this test, if it were going to crash.
    // eslint-disable-next-line sage/no-fixed-sleep -- negative check: the stream is the run's own, its error event is not reachable here
    await new Promise((resolve) => setTimeout(resolve, 50));
  });
});
