import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appendLineTool } from '../durable/test-support/append-line-tool.js';
import { openSqliteStore } from '../store/open-store.js';
import { eventually, startHarness, type Harness } from './test-support/harness.js';
import { answerThroughFaults, fillDisk } from './test-support/store-faults.js';

/**
 * SQLite on a 4 MB tmpfs (mount needs root, as CI runs): the disk fills under a live server, then
 * space is freed. No restart, no resend of what the server accepted.
 */
describe('SQLite on a full disk', () => {
  const mountPoint = mkdtempSync(join(tmpdir(), 'sage-full-'));
  let h: Harness;
  let log: string;

  beforeAll(async () => {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]);
    h = await startHarness({ store: () => openSqliteStore(join(mountPoint, 'sage.db')), tools: () => [appendLineTool(log)] });
    log = join(h.dir, 'appended.log');
  });
  afterAll(async () => {
    await h?.close();
    execFileSync('umount', [mountPoint]);
    rmSync(mountPoint, { recursive: true, force: true });
  });

  const script = (line: string) => h.script([{ text: 'appending', toolCalls: [{ name: 'AppendLine', input: { line } }] }, { text: 'appended' }]);
  const pendingAsk = (runId: string) => eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id, 20_000);

  test('503 disk_full with Retry-After while full (never 500), /readyz says disk_full; after space is freed every accepted run asks, every answer lands once', async () => {
    const before = await Promise.all(
      ['a', 'b', 'c'].map(async (line) => {
        const res = await h.api('alice', 'POST', '/runs', { task: `append ${line}`, model: script(line) });
        expect(res.status).toBe(201);
        return { runId: res.body.id as string, line };
      }),
    );
    for (const run of before) await pendingAsk(run.runId);

    const filler = fillDisk(mountPoint);
    // Runs started while the disk is full: each is refused with disk_full or accepted (201, the WAL
    // had room for its row); a big task soon needs room the disk does not have.
    const accepted: { runId: string; line: string }[] = [];
    let refused = 0;
    for (let i = 0; i < 40 && refused < 3; i++) {
      const line = `full-${i}`;
      const res = await h.api('alice', 'POST', '/runs', { task: `append ${line} ${'x'.repeat(60_000)}`, model: script(line) });
      if (res.status === 201) {
        accepted.push({ runId: res.body.id as string, line });
        continue;
      }
      expect(res.status, JSON.stringify(res.body)).toBe(503);
      expect(res.body.error.code).toBe('disk_full');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
      refused++;
    }
    expect(refused).toBeGreaterThan(0);
    const ready = await h.api('nobody', 'GET', '/readyz');
    expect(ready.status).toBe(503);
    expect(ready.body.error.code).toBe('disk_full');
    const live = await h.api('nobody', 'GET', '/healthz');
    expect(live.status).toBe(200);
    expect(live.body.storeStatus).toBe('disk_full');
    const answer = await h.api('alice', 'POST', `/interactions/${encodeURIComponent((await h.store.listInteractions({ runId: before[0]!.runId, status: ['pending'] }))[0]!.id)}/respond`, { kind: 'confirm', confirmed: true });
    expect([200, 503]).toContain(answer.status);
    if (answer.status === 503) expect(answer.body.error.code).toBe('disk_full');

    unlinkSync(filler);
    // Every run the server accepted asks for its approval by itself once there is room.
    const runs = [...before, ...accepted];
    const seen = { unavailable: 0, refusedConnections: 0 };
    await Promise.all(
      runs.map(async ({ runId }) => {
        const ask = await eventually(async () => {
          const open = (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id;
          if (open) return open;
          // Answered already (the answer above landed): nothing to ask.
          return (await h.store.listInteractions({ runId, status: ['answered'] })).length > 0 ? 'answered' : undefined;
        }, 20_000);
        if (ask !== 'answered') await answerThroughFaults(h, ask, { kind: 'confirm', confirmed: true }, seen);
      }),
    );
    for (const { runId } of runs) await eventually(async () => ((await h.store.getRun(runId))?.status === 'idle' ? true : undefined), 20_000);
    const lines = readFileSync(log, 'utf8').trim().split('\n');
    for (const { runId, line } of runs) {
      const calls = await h.store.listToolCalls(runId);
      expect(calls).toHaveLength(1);
      const times = lines.filter((l) => l === line).length;
      if (calls[0]!.status === 'interrupted') expect(times).toBeLessThanOrEqual(1);
      else expect(times).toBe(1);
    }
    expect((await h.api('nobody', 'GET', '/readyz')).status).toBe(200);
    console.log(`disk full: ${accepted.length} runs accepted and ${refused} refused while full; ${seen.unavailable} answers refused 503 and sent again`);
  }, 120_000);
});
