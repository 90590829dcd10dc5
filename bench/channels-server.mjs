/* global process, performance, setInterval, clearInterval */
/**
 * The server side of bench/channels.ts: what `sage serve --channels` builds (SQLite store, durable
 * driver, the webhook channel, the HTTP server), from the built dist/ and run by plain node, as
 * `sage serve` runs (tsx's loader alone adds ~75 MB of RSS). It reports, over IPC, when each run's
 * tool started (the store write of the tool's intent, made just before its side effect) and its RSS.
 */
import { join } from 'node:path';
import pino from 'pino';
import { startChannels } from '../dist/channels/start-channels.js';
import { webhookChannel } from '../dist/channels/webhook/webhook-adapter.js';
import { DurableRunDriver } from '../dist/server/durable-driver.js';
import { startServer } from '../dist/server/server.js';
import { openSqliteStore } from '../dist/store/open-store.js';

const now = () => performance.timeOrigin + performance.now();
const env = process.env;
const chats = Number(env.SAGE_BENCH_CHATS);
const store = await openSqliteStore(join(env.SAGE_BENCH_DIR, 'bench.db'));
/** runId → when the intent of the tool that asked (SAGE_BENCH_TOOL) was committed. */
const toolStart = new Map();
const write = store.write.bind(store);
store.write = async (w) => {
  await write(w);
  if (w.toolIntent?.toolName === env.SAGE_BENCH_TOOL && !toolStart.has(w.runId)) toolStart.set(w.runId, now());
};
let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 50);
// SAGE_BENCH_IDLE_SUSPEND_MS: release waiting runs from memory after this long (the driver's
// idleSuspendMs; `sage serve` keeps the default, 5 minutes); a tap then resumes its run from the store.
const idle = env.SAGE_BENCH_IDLE_SUSPEND_MS ? { idleSuspendMs: Number(env.SAGE_BENCH_IDLE_SUSPEND_MS) } : {};
const driver = await DurableRunDriver.open(store, { roots: [env.SAGE_BENCH_DIR], allowScriptedModels: true, defaultModel: env.SAGE_BENCH_MODEL, ...idle });
const logger = pino({ level: 'warn' });
const approvers = Array.from({ length: chats }, (_, i) => String(100_000 + i));
const channels = await startChannels({
  store,
  driver,
  config: { webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: env.SAGE_BENCH_PEER, approvers } },
  factories: [webhookChannel],
  env: { SAGE_WEBHOOK_SECRET: env.SAGE_BENCH_SECRET },
  log: logger,
});
const server = await startServer({ store, driver, port: 0, host: '127.0.0.1', tokens: 'bench-token-000001=bench', env: {}, logger, webRoot: false, closeStore: true, extraRoutes: channels.routes, beforeShutdown: () => channels.stop() });

process.on('message', (m) => {
  if (m.type === 'rss') process.send({ type: 'rss', rss: process.memoryUsage().rss, peakRss });
  else if (m.type === 'stats') {
    void (async () => {
      const starts = [];
      for (const [runId, at] of toolStart) {
        const run = await store.getRun(runId);
        const chatId = run?.options.origin?.chatId;
        if (chatId) starts.push({ chatId, at });
      }
      process.send({ type: 'stats', starts, rss: process.memoryUsage().rss, peakRss });
    })();
  } else if (m.type === 'stop') {
    clearInterval(sampler);
    void server.close().then(() => process.exit(0));
  }
});
process.send({ type: 'ready', url: server.url, rss: process.memoryUsage().rss });
