import { closeSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { expect } from 'vitest';
import type { Harness } from './harness.js';

/**
 * Ends every connection the server under test holds to the shared Postgres (its pool and its LISTEN
 * connection, told apart by the application_name each carries: `sage <schema>` and
 * `sage-listen sage_<schema>`), as `pg_terminate_backend` by an operator or a failover would.
 * Only this test's schema's connections: other tests on the same server are never touched.
 */
export async function terminateBackends(url: string, schema: string): Promise<number> {
  const admin = new pg.Client({ connectionString: url, application_name: `sage-test-admin ${schema}` });
  admin.on('error', () => {});
  await admin.connect();
  try {
    const rows = await admin.query<{ ok: boolean }>('SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE application_name = ANY($1::text[]) AND pid <> pg_backend_pid()', [[`sage ${schema}`, `sage-listen sage_${schema}`]]);
    return rows.rows.filter((r) => r.ok).length;
  } finally {
    await admin.end();
  }
}

/** What one answer came to after its retries: landed by this request, or found already landed. */
export type AnswerOutcome = 'answered' | 'already_answered';

/**
 * Answers as a client that honours 503 would: sends again after a 503 (which must name the store
 * fault and carry Retry-After) or a lost connection, until the server says it took the answer (200)
 * or that it already had one (409). Anything else — a 500 above all — fails the test.
 */
export async function answerThroughFaults(
  h: Harness,
  interactionId: string,
  body: unknown,
  seen: { unavailable: number; refusedConnections: number },
  /** When the answer must have been taken by (ms since the epoch); read before every attempt, so a test can set it once the store is back. */
  deadline: () => number = (() => {
    const until = Date.now() + 30_000;
    return () => until;
  })(),
  retryMs = 20,
): Promise<AnswerOutcome> {
  for (;;) {
    if (Date.now() > deadline()) throw new Error(`the answer to ${interactionId} was not taken by its deadline`);
    let res: { status: number; body: any; headers: Headers };
    try {
      res = await h.api('alice', 'POST', `/interactions/${encodeURIComponent(interactionId)}/respond`, body);
    } catch {
      seen.refusedConnections++;
      await new Promise((r) => setTimeout(r, retryMs));
      continue;
    }
    if (res.status === 200) return 'answered';
    if (res.status === 409 && res.body?.error?.code === 'interaction_already_answered') return 'already_answered';
    expect(res.status, JSON.stringify(res.body)).toBe(503);
    expect(['store_unavailable', 'disk_full']).toContain(res.body.error.code);
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    seen.unavailable++;
    // A real client waits Retry-After seconds; the test asks again sooner, to hit the fault's edges.
    await new Promise((r) => setTimeout(r, retryMs));
  }
}

/** Writes a file until the disk is full; returns its path (delete it to free the space). */
export function fillDisk(dir: string): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'w');
  const chunk = Buffer.alloc(16 * 1024, 1);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  } finally {
    closeSync(fd);
  }
  return file;
}
