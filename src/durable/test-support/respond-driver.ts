/**
 * A second process answering requests in a SQLite store that another process drives, as
 * `sage respond` does: one JSON line per answer on stdin, `{ "id": "…", "answer": { … } }`; one JSON
 * line back per answer, `{ "id", "delivered" }` or `{ "id", "error" }`. It never drives a run (the
 * runs it answers are live elsewhere), so it stays up for many answers without a process start each.
 *
 *   node respond-driver.mjs '{"db":"/tmp/x/sage.db","dir":"/tmp/x"}'
 */
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { openSqliteStore } from '../../store/open-store.js';
import { DurableRunner } from '../durable-runner.js';
import { scenarioRuntime } from './scenario.js';

const args = JSON.parse(process.argv[2] ?? '{}') as { db: string; dir: string };
const store = await openSqliteStore(args.db, { synchronous: 'normal' });
const runner = await new DurableRunner({ store, runtime: scenarioRuntime(join(args.dir, 'appended.log')), idleSuspendMs: 0, instanceId: 'responder' }).open();
process.stdout.write('ready\n');
for await (const line of createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const { id, answer } = JSON.parse(line) as { id: string; answer: Record<string, unknown> };
  try {
    const result = await runner.respond(id, answer);
    process.stdout.write(`${JSON.stringify({ id, delivered: result.delivered })}\n`);
  } catch (error) {
    process.stdout.write(`${JSON.stringify({ id, error: (error as { code?: string }).code ?? String(error) })}\n`);
  }
}
await runner.close();
await store.close();
