/* global process, performance, setInterval, clearInterval, console */
/**
 * The server side of bench/channels.ts: what `sage serve --channels` builds (SQLite store, durable
 * driver, the webhook channel, the HTTP server), from the built dist/ and run by plain node, as
 * `sage serve` runs (tsx's loader alone adds ~75 MB of RSS). It reports, over IPC, when each run's
 * tool started (the store write of the tool's intent, made just before its side effect) and its RSS.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { getHeapSpaceStatistics, writeHeapSnapshot } from 'node:v8';
import Database from 'better-sqlite3';
import pino from 'pino';
import { pathToFileURL } from 'node:url';

// SAGE_BENCH_DIST: another build of Sage than ../dist (a build of another commit, say, for a
// before/after in the same session); its folder must resolve node_modules (a symlink will do).
const distUrl = pathToFileURL(join(process.env.SAGE_BENCH_DIST ?? join(import.meta.dirname, '../dist'), '/')).href;
const { startChannels } = await import(`${distUrl}channels/start-channels.js`);
const { DurableRunDriver } = await import(`${distUrl}server/durable-driver.js`);
const { startServer } = await import(`${distUrl}server/server.js`);
const { openSqliteStore } = await import(`${distUrl}store/open-store.js`);
// What `sage serve` does at start: V8's old generation grows 15% past what survived the last full
// collection, not V8's 4× (SAGE_BENCH_HEAP_GROWTH=0 leaves V8's own, as `sage serve --heap-growth 0`).
const { limitHeapGrowth, SERVER_HEAP_GROWTH_PERCENT } = await import(`${distUrl}server/heap-growth.js`);
limitHeapGrowth(process.env.SAGE_BENCH_HEAP_GROWTH !== undefined ? Number(process.env.SAGE_BENCH_HEAP_GROWTH) : SERVER_HEAP_GROWTH_PERCENT);

const now = () => performance.timeOrigin + performance.now();
const env = process.env;
const chats = Number(env.SAGE_BENCH_CHATS);
/**
 * SQLite commits, counted under the store (the same better-sqlite3 module dist/ loads): each
 * COMMIT, each write outside a transaction (SQLite commits it alone), and the wall time the event
 * loop spent blocked in COMMIT (the fsync at synchronous=FULL). Counts do not depend on the load.
 */
const stalls = env.SAGE_BENCH_STALLS ? { min: Number(env.SAGE_BENCH_STALLS), loop: [], gc: [], calls: [], t0: performance.now() } : undefined;
const sqlite = { commits: 0, autocommits: 0, commitMs: 0 };
{
  const exec = Database.prototype.exec;
  Database.prototype.exec = function (sql) {
    if (sql !== 'COMMIT') return exec.call(this, sql);
    const t = performance.now();
    try {
      return exec.call(this, sql);
    } finally {
      sqlite.commits++;
      sqlite.commitMs += performance.now() - t;
    }
  };
  const probe = new Database(':memory:');
  const statement = Object.getPrototypeOf(probe.prepare('select 1'));
  probe.close();
  const run = statement.run;
  statement.run = function (...args) {
    if (!this.reader && !this.database.inTransaction) sqlite.autocommits++;
    return run.apply(this, args);
  };
  // SAGE_BENCH_STALLS: each statement that held the loop longer than that, by its SQL.
  if (stalls) {
    for (const method of ['run', 'all', 'get', 'iterate']) {
      const call = statement[method];
      statement[method] = function (...args) {
        const t = performance.now();
        try {
          return call.apply(this, args);
        } finally {
          const held = performance.now() - t;
          if (held > stalls.min) stalls.calls.push(`${((t - stalls.t0) / 1000).toFixed(2)}s ${held.toFixed(0)}ms ${method} ${this.source.replace(/\s+/g, ' ').slice(0, 160)} (${args.flat().length} params)`);
        }
      };
    }
  }
}
const store = await openSqliteStore(join(env.SAGE_BENCH_DIR, 'bench.db'));
/** runId → when the intent of the tool that asked (SAGE_BENCH_TOOL) was committed. */
const toolStart = new Map();
const write = store.write.bind(store);
store.write = async (w) => {
  await write(w);
  if (w.toolIntent?.toolName === env.SAGE_BENCH_TOOL && !toolStart.has(w.runId)) toolStart.set(w.runId, now());
};
/**
 * SAGE_BENCH_STORE_STACKS=readEvents,write: during the taps, who calls those store methods (the
 * call stacks, async frames included, counted and printed by the server at the end; slow: its
 * timings are not figures).
 */
const stackCensus = env.SAGE_BENCH_STORE_STACKS
  ? {
      on: false,
      methods: new Set(env.SAGE_BENCH_STORE_STACKS.split(',')),
      stacks: new Map(),
      count(name, stack) {
        const frames = stack.split('\n').slice(2, 14).map((l) => l.trim().replace(/^at /, '').replace(/\(?file:\/\/.*?\/(dist|node_modules)\//, '$1/').replace(/\)$/, '')).join(' < ');
        const key = `${name}: ${frames}`;
        this.stacks.set(key, (this.stacks.get(key) ?? 0) + 1);
      },
      print() {
        for (const [key, n] of [...this.stacks].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(`  ${(n / chats).toFixed(2)} per tap  ${key}`);
      },
    }
  : undefined;
/** Calls of each store method (what a tap costs the store, by call: the commits above come from these). */
const storeCalls = {};
for (let proto = store; proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === 'constructor' || name in storeCalls || typeof store[name] !== 'function') continue;
    const method = store[name].bind(store);
    storeCalls[name] = 0;
    store[name] = (...args) => {
      storeCalls[name]++;
      if (stackCensus?.on && stackCensus.methods.has(name)) stackCensus.count(name, new Error().stack);
      return method(...args);
    };
  }
}
// process.memoryUsage.rss(): the RSS alone; process.memoryUsage() also walks V8's heap spaces, which
// was ~1% of the server's CPU during the taps at one call per 50 ms.
let peakRss = process.memoryUsage.rss();
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage.rss())), 50);
/**
 * SAGE_BENCH_STALLS=ms: the event loop's stalls longer than that (a 5 ms timer that fired late), and
 * the garbage collections longer than that, each with its time since the start, printed at the end:
 * where the tail of tap → tool start comes from. The probe itself costs ~1% of a core.
 */
if (stalls) {
  let last = performance.now();
  setInterval(() => {
    const t = performance.now();
    if (t - last - 5 > stalls.min) stalls.loop.push(`${((last - stalls.t0) / 1000).toFixed(2)}s +${(t - last - 5).toFixed(0)}ms`);
    last = t;
  }, 5).unref();
  const { PerformanceObserver, constants } = await import('node:perf_hooks');
  const kinds = { [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major', [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (e.duration > stalls.min) stalls.gc.push(`${((e.startTime - stalls.t0) / 1000).toFixed(2)}s ${kinds[e.detail?.kind] ?? e.detail?.kind} ${e.duration.toFixed(0)}ms`);
  }).observe({ entryTypes: ['gc'] });
}
// SAGE_BENCH_IDLE_SUSPEND_MS: release waiting runs from memory after this long (the driver's
// idleSuspendMs; `sage serve` keeps the default, 5 minutes); a tap then resumes its run from the store.
const idle = env.SAGE_BENCH_IDLE_SUSPEND_MS ? { idleSuspendMs: Number(env.SAGE_BENCH_IDLE_SUSPEND_MS) } : {};
// SAGE_BENCH_MAX_WAITING: the driver's maxWaitingInMemory (default SERVER_MAX_WAITING_IN_MEMORY, as
// `sage serve --max-waiting-in-memory`); the runs beyond it wait in the store and a tap resumes them.
if (env.SAGE_BENCH_MAX_WAITING) idle.maxWaitingInMemory = Number(env.SAGE_BENCH_MAX_WAITING);
// SAGE_BENCH_IDLE_RUN_SUSPEND_MS: how long a run whose task is done stays in memory (the driver's
// idleRunSuspendMs; `sage serve` releases it at its ask for the next message, 0).
if (env.SAGE_BENCH_IDLE_RUN_SUSPEND_MS) idle.idleRunSuspendMs = Number(env.SAGE_BENCH_IDLE_RUN_SUSPEND_MS);
const driver = await DurableRunDriver.open(store, { roots: [env.SAGE_BENCH_DIR], allowScriptedModels: true, defaultModel: env.SAGE_BENCH_MODEL, ...idle });
const logger = pino({ level: 'warn' });
const approvers = Array.from({ length: chats }, (_, i) => String(100_000 + i));
// SAGE_BENCH_PLATFORM=telegram: the Telegram adapter (grammY, long polling) against the bench's fake
// Bot API at SAGE_BENCH_PEER, instead of the generic webhook posting to it.
const channelSetup =
  env.SAGE_BENCH_PLATFORM === 'telegram'
    ? {
        config: { telegram: { tokenEnv: 'TELEGRAM_BOT_TOKEN', apiRoot: env.SAGE_BENCH_PEER, approvers } },
        factories: [(await import(`${distUrl}channels/telegram/adapter.js`)).telegramAdapterFactory],
        env: { TELEGRAM_BOT_TOKEN: env.SAGE_BENCH_TELEGRAM_TOKEN },
      }
    : {
        config: { webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: env.SAGE_BENCH_PEER, approvers } },
        factories: [(await import(`${distUrl}channels/webhook/webhook-adapter.js`)).webhookChannel],
        env: { SAGE_WEBHOOK_SECRET: env.SAGE_BENCH_SECRET },
      };
const channels = await startChannels({ store, driver, ...channelSetup, log: logger });
const server = await startServer({ store, driver, port: 0, host: '127.0.0.1', tokens: 'bench-token-000001=bench', env: {}, logger, webRoot: false, closeStore: true, extraRoutes: channels.routes, beforeShutdown: () => channels.stop() });

process.on('message', (m) => {
  if (m.type === 'rss') {
    // SAGE_BENCH_HEAP_SNAPSHOT=dir: heap snapshots with the N chats waiting (what each waiting run
    // holds) and after the last "done"; writing one roughly doubles the heap for a moment, so the
    // peak RSS of such a run is not a figure.
    if (env.SAGE_BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(join(env.SAGE_BENCH_HEAP_SNAPSHOT, `channels-${chats}-waiting.heapsnapshot`));
    process.send({ type: 'rss', rss: process.memoryUsage().rss, peakRss, memory: process.memoryUsage(), spaces: heapSpaces() });
  }
  // SAGE_BENCH_TAP_PROFILE=dir: a CPU profile and an allocation profile of the taps alone (from the
  // first tap to the last "done"), where SAGE_BENCH_PROFILE's --cpu-prof also covers the start of the N runs.
  else if (m.type === 'taps') void tapProfile.start().then(() => stackCensus && (stackCensus.on = true)).then(() => process.send({ type: 'taps', cpu: process.cpuUsage(), sqlite: { ...sqlite }, storeCalls: { ...storeCalls } }));
  else if (m.type === 'stats') {
    void (async () => {
      // Counted before the look-ups below (a getRun per run) so that they are not billed to the taps.
      const counts = { cpu: process.cpuUsage(), sqlite: { ...sqlite }, storeCalls: { ...storeCalls } };
      if (stackCensus) {
        stackCensus.on = false;
        stackCensus.print();
      }
      const starts = [];
      for (const [runId, at] of toolStart) {
        const run = await store.getRun(runId);
        const chatId = run?.options.origin?.chatId;
        if (chatId) starts.push({ chatId, at });
      }
      await tapProfile.stop();
      if (stalls) console.log(`server stalls > ${stalls.min} ms: loop [${stalls.loop.join(', ')}]; gc [${stalls.gc.join(', ')}]; statements [${stalls.calls.join(', ')}]`);
      const atEnd = process.memoryUsage();
      if (env.SAGE_BENCH_HEAP_SNAPSHOT) writeHeapSnapshot(join(env.SAGE_BENCH_HEAP_SNAPSHOT, `channels-${chats}-done.heapsnapshot`));
      process.send({ type: 'stats', starts, rss: atEnd.rss, peakRss, memory: atEnd, spaces: heapSpaces(), ...counts });
    })();
  } else if (m.type === 'stop') {
    clearInterval(sampler);
    void server.close().then(() => process.exit(0));
  }
});
/** V8's heap by space, MB committed (what counts in RSS) and used. */
function heapSpaces() {
  const mb = (n) => Math.round(n / 2 ** 20);
  return Object.fromEntries(getHeapSpaceStatistics().filter((s) => s.physical_space_size > 2 ** 20).map((s) => [s.space_name, { committed: mb(s.physical_space_size), used: mb(s.space_used_size) }]));
}

const tapProfile = {
  session: undefined,
  async start() {
    // Once: the bench asks for the counters at the start of each phase of taps.
    if (!env.SAGE_BENCH_TAP_PROFILE || this.session) return;
    this.session = new Session();
    this.session.connect();
    await this.session.post('Profiler.enable');
    await this.session.post('Profiler.setSamplingInterval', { interval: 500 });
    await this.session.post('Profiler.start');
    // And what the taps allocate (garbage included): the old generation it fills sets the peak RSS.
    await this.session.post('HeapProfiler.startSampling', { samplingInterval: 16384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true });
  },
  async stop() {
    if (!this.session) return;
    const { profile } = await this.session.post('Profiler.stop');
    writeFileSync(join(env.SAGE_BENCH_TAP_PROFILE, `channels-${chats}-taps.cpuprofile`), JSON.stringify(profile));
    const { profile: allocations } = await this.session.post('HeapProfiler.stopSampling');
    writeFileSync(join(env.SAGE_BENCH_TAP_PROFILE, `channels-${chats}-taps.heapprofile`), JSON.stringify(allocations));
    this.session.disconnect();
    this.session = undefined;
  },
};

process.send({ type: 'ready', url: server.url, rss: process.memoryUsage().rss, memory: process.memoryUsage() });
