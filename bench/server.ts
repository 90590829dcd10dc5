/**
 * Server benchmark (issue 6): N concurrent SSE clients (default 1,000), each watching its own run
 * that waits on a permission ask; then every ask is answered over HTTP. Measured per answer: the
 * time from sending `POST /interactions/:id/respond` to the next event (`interaction.answered`)
 * reaching that run's SSE client; and the answers per second.
 *
 *   npx tsx bench/server.ts [--clients 1000] [--concurrency 1,16,1000] [--synchronous full|normal]
 *
 * The server runs in a child process (as `sage serve` would: SQLite store, bearer auth, loopback),
 * so the clients' parsing does not share its event loop. Each concurrency level gets fresh runs.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TOKEN = 'bench-token-000001';

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

// ---------------------------------------------------------------------------------------------
// The server process.

async function serve(): Promise<void> {
  const pino = (await import('pino')).default;
  const { openSqliteStore } = await import('../src/store/open-store.js');
  const { DurableRunDriver } = await import('../src/server/durable-driver.js');
  const { startServer } = await import('../src/server/server.js');
  const dir = process.env['SAGE_BENCH_DIR']!;
  const store = await openSqliteStore(join(dir, 'bench.db'), { synchronous: process.env['SAGE_BENCH_SYNC'] === 'normal' ? 'normal' : 'full' });
  const driver = await DurableRunDriver.open(store, { roots: [dir], allowScriptedModels: true });
  const server = await startServer({ store, driver, port: 0, tokens: `${TOKEN}=bench`, env: {}, logger: pino({ level: 'warn' }), webRoot: false, closeStore: true });
  process.send!({ url: server.url });
  process.on('message', (m) => {
    if (m === 'stop') void server.close().then(() => process.exit(0));
  });
}

// ---------------------------------------------------------------------------------------------
// The clients.

const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

/**
 * Retries a connection reset (a kept-alive socket the server closed just as it was reused, or a
 * full accept queue while hundreds of connections open at once); anything else is a failure.
 */
async function withRetry<T>(work: () => Promise<T>, attempts = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await work();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET' || i >= attempts) throw error;
      resets++;
    }
  }
}

let resets = 0;

function request(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  return withRetry(() => requestOnce(url, method, body));
}

function requestOnce(url: string, method: string, body?: unknown): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(url, { method, agent, headers: { authorization: `Bearer ${TOKEN}`, ...(payload ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : undefined }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** One SSE connection; records when the first event after `armed` arrives. */
class Watcher {
  firstEventAt = 0;
  armedAt = 0;
  private req: http.ClientRequest | undefined;
  private resolveFirst!: () => void;
  readonly first = new Promise<void>((r) => (this.resolveFirst = r));

  open(url: string, lastEventId: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.req = http.get(url, { agent: false, headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream', 'last-event-id': String(lastEventId) } }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`SSE ${res.statusCode}`));
        // Closing the watcher resets the socket; that is the end of the stream, not a failure.
        res.on('error', () => {});
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk: string) => {
          buffer += chunk;
          // The connection is up once the retry hint arrives; an `id:` line is an event.
          if (buffer.includes('\n\n')) resolve();
          if (this.armedAt > 0 && this.firstEventAt === 0 && /(^|\n)id: /.test(buffer)) {
            this.firstEventAt = performance.now();
            this.resolveFirst();
          }
          const cut = buffer.lastIndexOf('\n\n');
          if (cut >= 0) buffer = buffer.slice(cut + 2);
        });
      });
      this.req.on('error', (e) => (this.firstEventAt === 0 ? reject(e) : undefined));
    });
  }

  close(): void {
    this.req?.destroy();
  }
}

async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

async function level(url: string, dir: string, clients: number, concurrency: number, round: number) {
  const script = join(dir, `script-${round}.json`);
  writeFileSync(script, JSON.stringify({ turns: [{ text: 'writing', toolCalls: [{ name: 'Write', input: { file_path: 'out.txt', content: 'x' } }] }, { text: 'done' }] }));
  // Start the runs and wait until each one waits on its ask.
  const t0 = performance.now();
  const runs: string[] = [];
  await pool(Array.from({ length: clients }, (_, i) => i), 64, async () => {
    const res = await request(`${url}/runs`, 'POST', { task: 'bench', model: `scripted:${script}` });
    if (res.status !== 201) throw new Error(`start: ${res.status} ${JSON.stringify(res.json)}`);
    runs.push(res.json.id);
  });
  const startMs = performance.now() - t0;
  process.stderr.write(`concurrency ${concurrency}: ${clients} runs started in ${(startMs / 1000).toFixed(1)} s\n`);
  const asks = new Map<string, string>();
  while (asks.size < runs.length) {
    const res = await request(`${url}/interactions?status=pending&limit=1000`, 'GET');
    for (const i of res.json.interactions as { id: string; runId: string; kind: string }[]) if (i.kind === 'confirm' && runs.includes(i.runId)) asks.set(i.runId, i.id);
    if (asks.size < runs.length) await new Promise((r) => setTimeout(r, 50));
  }
  // Connect every watcher after the log's current end: the next event it sees is the answer's.
  const watchers = new Map<string, Watcher>();
  await pool(runs, 100, async (runId) => {
    const suspended = await request(`${url}/runs/${runId}`, 'GET');
    if (suspended.status !== 200) throw new Error('run');
    const w = new Watcher();
    const events = await request(`${url}/runs/${runId}/suspended`, 'GET');
    if (events.status !== 200) throw new Error('not waiting');
    // Last-Event-ID: the seq of the request event's run log end (read from the replay of the run).
    const after = await withRetry(() => lastSeq(url, runId));
    await withRetry(() => w.open(`${url}/runs/${runId}/events`, after));
    watchers.set(runId, w);
  });

  process.stderr.write(`concurrency ${concurrency}: ${watchers.size} SSE clients connected; answering\n`);
  const latencies: number[] = [];
  const a0 = performance.now();
  await pool(runs, concurrency, async (runId) => {
    const w = watchers.get(runId)!;
    const id = asks.get(runId)!;
    w.armedAt = performance.now();
    const res = await request(`${url}/interactions/${encodeURIComponent(id)}/respond`, 'POST', { kind: 'confirm', confirmed: true });
    if (res.status !== 200) throw new Error(`respond: ${res.status} ${JSON.stringify(res.json)}`);
    await w.first;
    latencies.push(w.firstEventAt - w.armedAt);
  });
  const answerMs = performance.now() - a0;
  for (const w of watchers.values()) w.close();
  latencies.sort((x, y) => x - y);
  return { clients, concurrency, startRps: clients / (startMs / 1000), p50: pct(latencies, 50), p90: pct(latencies, 90), p99: pct(latencies, 99), max: latencies.at(-1)!, answerRps: clients / (answerMs / 1000) };
}

/** The last seq in the run's log, read by replaying it once (the stream ends quickly with ?after). */
async function lastSeq(url: string, runId: string): Promise<number> {
  return new Promise((resolve, reject) => {
    let max = 0;
    const req = http.get(`${url}/runs/${runId}/events`, { agent: false, headers: { authorization: `Bearer ${TOKEN}`, accept: 'text/event-stream' } }, (res) => {
      res.on('error', () => {});
      res.setEncoding('utf8');
      let buffer = '';
      res.on('data', (chunk: string) => {
        buffer += chunk;
        for (const m of buffer.matchAll(/(^|\n)id: (\d+)/g)) max = Math.max(max, Number(m[2]));
        // The waiting run's last event is its interaction.requested: stop there.
        if (/event: interaction\.requested/.test(buffer)) {
          req.destroy();
          resolve(max);
        }
      });
    });
    req.on('error', (e) => (max > 0 ? undefined : reject(e)));
  });
}

async function main(): Promise<void> {
  if (process.env['SAGE_BENCH_ROLE'] === 'server') return serve();
  const clients = Number(arg('clients', '1000'));
  const levels = arg('concurrency', '1,16,1000').split(',').map(Number);
  const synchronous = arg('synchronous', 'full');
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-server-'));
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [], { env: { ...process.env, SAGE_BENCH_ROLE: 'server', SAGE_BENCH_DIR: dir, SAGE_BENCH_SYNC: synchronous }, execArgv: ['--import', 'tsx', ...(process.env['SAGE_BENCH_PROFILE'] ? ['--cpu-prof', `--cpu-prof-dir=${process.env['SAGE_BENCH_PROFILE']}`] : [])], stdio: 'inherit' });
  const url = await new Promise<string>((resolve) => child.once('message', (m: { url: string }) => resolve(m.url)));
  const rows = [];
  try {
    let round = 0;
    for (const c of levels) rows.push(await level(url, dir, clients, c, ++round));
  } finally {
    child.send('stop');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
  const f = (n: number) => n.toFixed(2);
  console.log(`\nSage server: ${clients} SSE clients, each watching a run waiting on a permission ask (SQLite synchronous=${synchronous}, loopback, ${cpus().length} CPUs, node ${process.versions.node})`);
  console.log('latency = POST /interactions/:id/respond sent -> next event (interaction.answered) at that run\'s SSE client\n');
  console.log('| answer concurrency | p50 ms | p90 ms | p99 ms | max ms | answers/s | run starts/s |');
  console.log('|---:|---:|---:|---:|---:|---:|---:|');
  for (const r of rows) console.log(`| ${r.concurrency} | ${f(r.p50)} | ${f(r.p90)} | ${f(r.p99)} | ${f(r.max)} | ${r.answerRps.toFixed(0)} | ${r.startRps.toFixed(0)} |`);
  if (resets > 0) console.log(`\n(${resets} connection resets were retried)`);
}

await main();
