import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { DurableRunner } from '../durable/durable-runner.js';
import { cliRuntime } from '../runtime/cli-runtime.js';
import { registerRunsCommands } from './runs-command.js';

/** Runs `sage …args` in this process and returns what it printed. */
async function sage(...args: string[]): Promise<string> {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    const program = new Command('sage').exitOverride();
    registerRunsCommands(program);
    await program.parseAsync(['node', 'sage', ...args]);
  } finally {
    spy.mockRestore();
  }
  return lines.join('');
}

async function eventually<T>(check: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 500; i++) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('condition not met');
}

describe('sage runs list / show / close and what a run waits for', () => {
  let dir: string;
  let db: string;
  let store: Store;
  let runner: DurableRunner;
  const script = (turns: unknown[]) => {
    const file = join(dir, `script-${Math.random().toString(36).slice(2)}.json`);
    writeFileSync(file, JSON.stringify({ turns }));
    return `scripted:${file}`;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sage-runs-status-'));
    db = join(dir, 'sage.db');
    // Another "process": its own connection and runner, holding its runs in memory (no idle release).
    store = await openSqliteStore(db);
    runner = new DurableRunner({ store, runtime: cliRuntime(store), idleSuspendMs: 3_600_000 });
    await runner.open();
  });
  afterEach(async () => {
    await runner.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('shows an approval a run waits for in memory elsewhere, at once (list and show)', async () => {
    const handle = await runner.start('write it', { model: script([{ text: 'writing', toolCalls: [{ name: 'Write', input: { file_path: 'out.txt', content: 'x' } }] }, { text: 'done' }]), cwd: dir });
    const ask = await eventually(async () => (await store.listInteractions({ runId: handle.runId, status: ['pending'] }))[0]);
    const show = await sage('runs', 'show', handle.runId, '--db', db);
    expect(show).toMatch(/^status {3}running$/m);
    expect(show).toContain(`waiting  ${ask.id} (pending, risk MEDIUM)`);
    const list = await sage('runs', 'list', '--db', db);
    expect(list).toContain(`${handle.runId}  running`);
    expect(list).toContain(`waiting: ${ask.id}`);
    const json = JSON.parse(await sage('runs', 'show', handle.runId, '--db', db, '--json')) as { status: string; pendingInteractionId: string };
    expect(json).toMatchObject({ status: 'running', pendingInteractionId: ask.id });
    handle.run.cancel();
    await handle.outcome;
  });

  it('lists an idle run as idle, filters by --status idle, and closes it as completed', async () => {
    const handle = await runner.start('answer once', { model: script([{ text: 'Here is the answer.' }]), cwd: dir });
    await eventually(async () => ((await store.getRun(handle.runId))?.status === 'idle' ? true : undefined));
    const list = await sage('runs', 'list', '--status', 'idle', '--db', db);
    expect(list).toContain(`${handle.runId}  idle`);
    expect(await sage('runs', 'list', '--status', 'running', '--db', db)).not.toContain(handle.runId);
    const show = await sage('runs', 'show', handle.runId, '--db', db);
    expect(show).toMatch(/^status {3}idle$/m);
    expect(show).toMatch(/waiting {2}\S+:input:1 \(pending\): Your reply/);

    // The run lives in the other runner's memory: the close reaches it through the store.
    const closed = JSON.parse(await sage('runs', 'close', handle.runId, '--db', db, '--json')) as { status: string; delivered: string };
    expect(['notified', 'resumed']).toContain(closed.delivered);
    const outcome = await handle.outcome;
    const done = await eventually(async () => {
      const r = await store.getRun(handle.runId);
      return r?.status === 'completed' ? r : undefined;
    });
    expect(done).toMatchObject({ finalText: 'Here is the answer.', pendingInteractionId: null });
    expect(['completed', 'suspended']).toContain(outcome.status);
  });

  it('refuses to close a run that is not idle, naming what it waits for, and one that finished', async () => {
    const handle = await runner.start('write it', { model: script([{ text: 'writing', toolCalls: [{ name: 'Write', input: { file_path: 'out.txt', content: 'x' } }] }, { text: 'done' }]), cwd: dir });
    const ask = await eventually(async () => (await store.listInteractions({ runId: handle.runId, status: ['pending'] }))[0]);
    await expect(sage('runs', 'close', handle.runId, '--db', db)).rejects.toThrow(new RegExp(`is running, not idle \\(it waits for ${ask.id}`));
    handle.run.cancel();
    await handle.outcome;
    await expect(sage('runs', 'close', handle.runId, '--db', db)).rejects.toThrow(/cancelled/);
    await expect(sage('runs', 'list', '--status', 'sleeping', '--db', db)).rejects.toThrow(/idle/);
  });
});
