import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { openSqliteStore } from '../../store/open-store.js';
import type { Store } from '../../store/index.js';
import type { Tool } from '../../tool/types.js';
import { DurableRunDriver } from '../durable-driver.js';
import type { ServerPolicy } from '../../runtime/server-policy.js';
import { startServer, type RunningServer } from '../server.js';
import { eventually } from '../../test-support/eventually.js';

export const TOKENS = { alice: 'token-alice-0001', bob: 'token-bob-0002', carol: 'token-carol-0003', mallory: 'token-mallory-0004' } as const;
export type Who = keyof typeof TOKENS | 'nobody';

export interface Harness {
  url: string;
  dir: string;
  store: Store;
  server: RunningServer;
  driver: DurableRunDriver;
  /** Writes a scripted model's turns to a file and returns its model spec. */
  script(turns: unknown[]): string;
  api(who: Who, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }>;
  close(): Promise<void>;
}

/**
 * A real server on 127.0.0.1 (port 0), over a SQLite store in a temp directory, with four users:
 * alice, bob and mallory (users) and carol (admin).
 */
export async function startHarness(
  options: {
    auth?: boolean;
    maxBodyBytes?: number;
    webRoot?: string | false;
    interactionTimeoutMs?: number;
    tools?: () => Tool[];
    serverPolicy?: ServerPolicy;
    home?: string;
    /** The store to serve (closed with the server); default a SQLite file in the temp directory. */
    store?: (dir: string) => Promise<Store>;
  } = {},
): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'sage-server-'));
  const store = options.store ? await options.store(dir) : await openSqliteStore(join(dir, 'sage.db'));
  const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true, interactionTimeoutMs: options.interactionTimeoutMs, tools: options.tools, serverPolicy: options.serverPolicy, home: options.home });
  const server = await startServer({
    store,
    driver,
    host: '127.0.0.1',
    port: 0,
    tokens: options.auth === false ? [] : `${TOKENS.alice}=alice,${TOKENS.bob}=bob,${TOKENS.carol}=carol:admin,${TOKENS.mallory}=mallory`,
    env: {},
    logger: pino({ level: 'silent' }),
    maxBodyBytes: options.maxBodyBytes,
    webRoot: options.webRoot ?? false,
    closeStore: true,
  });
  let n = 0;
  return {
    url: server.url,
    dir,
    store,
    server,
    driver,
    script(turns) {
      const file = join(dir, `script-${++n}.json`);
      writeFileSync(file, JSON.stringify({ turns }));
      return `scripted:${file}`;
    },
    async api(who, method, path, body, headers = {}) {
      const h: Record<string, string> = { ...headers };
      if (who !== 'nobody') h['authorization'] = `Bearer ${TOKENS[who]}`;
      // The server refuses a state-changing request without the JSON content type, body or not.
      if (body !== undefined || method !== 'GET') h['content-type'] ??= 'application/json';
      const res = await fetch(server.url + path, { method, headers: h, body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: res.status, body: parsed, headers: res.headers };
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export { eventually };

/** A script whose first turn writes a file (the gate asks), then answers, then ends after one follow-up. */
export function askingScript(file = 'out.txt'): unknown[] {
  return [
    { text: 'I will write the file.', toolCalls: [{ name: 'Write', input: { file_path: file, content: 'hello\n' } }] },
    { text: 'Done writing.' },
    { text: 'Bye.' },
  ];
}

let askingRuns = 0;

/**
 * Starts a run as `who` that will ask permission for a Write, and waits for the ask. Each run
 * writes a file of its own: a Write over a file the run has not read fails before anyone is asked.
 */
export async function startAskingRun(h: Harness, who: 'alice' | 'bob' | 'carol' = 'alice'): Promise<{ runId: string; interactionId: string; file: string }> {
  const file = `out-${++askingRuns}.txt`;
  const started = await h.api(who, 'POST', '/runs', { task: 'write a file', model: h.script(askingScript(file)) });
  if (started.status !== 201) throw new Error(`start failed: ${JSON.stringify(started.body)}`);
  const runId = started.body.id as string;
  const interactionId = await eventually(async () => (await h.store.listInteractions({ runId, status: ['pending'] }))[0]?.id);
  return { runId, interactionId, file };
}

export const enc = encodeURIComponent;
