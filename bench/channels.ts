/**
 * Chat channels benchmark (issue 15): N concurrent chats (default 1,000) on the fake Telegram Bot API
 * (the adapter's test fake: getUpdates long polling, callback queries; `--platform webhook`: the
 * generic webhook adapter instead), in one `sage serve`-like process (store, durable driver,
 * channels, HTTP server; a scripted model). Every chat sends a message that starts a run; every run
 * asks to run a tool, and the approval reaches the chat with its buttons; all N wait at once. Then
 * every chat taps "once": C taps in flight (a closed loop: the next tap leaves when one is answered), or
 * with --rate R, R taps a second whatever the server does (an open loop, as people tap); with
 * neither flag, three phases: 40% of the chats at 20 taps a second (a busy team), 30% at 100 taps
 * a second (five times that), then 30% with 16 in flight, each with its own figures.
 *
 * The issue's goal (tap → tool start p99 ≤ 50 ms) is a latency at an arrival rate: it gets a goal
 * line for each open-loop phase. A closed loop measures throughput instead: with C taps always
 * waiting, each queues behind the others on the server's one event loop and its latency is ≈ C ×
 * the server's time per tap whatever the code does, so that phase prints its taps a second and its
 * p99 without a goal. Measured:
 *
 *   - tap → tool start: from the tap (Telegram: the callback_query handed to the bot's getUpdates;
 *     webhook: the signed POST /channels/webhook leaving) to the server
 *     committing the tool's intent (the store write made just before a tool's side effect starts),
 *     both read on the wall clock of the same machine (performance.timeOrigin + now());
 *   - the server process's RSS: its peak (sampled every 50 ms) over the whole benchmark, and with
 *     the N chats waiting.
 *
 *   npx tsx bench/channels.ts [--chats 1000] [--concurrency 16 | --rate 20] [--tool write|bash] [--platform telegram|webhook]   # default: both, half each
 *   SAGE_SQLITE_SYNCHRONOUS=normal npx tsx bench/channels.ts    # the store without an fsync per commit
 *   SAGE_BENCH_IDLE_SUSPEND_MS=5000 npx tsx bench/channels.ts   # waiting runs released from memory after 5 s
 *   SAGE_BENCH_MAX_WAITING=100 npx tsx bench/channels.ts        # at most 100 runs wait in memory (default: the server's, 1000)
 *   SAGE_BENCH_HEAP_GROWTH=0 npx tsx bench/channels.ts          # V8's own heap growth (sage serve --heap-growth 0; default 15%)
 *   SAGE_BENCH_YOUNG_GENERATION=0 npx tsx bench/channels.ts     # V8's own young generation (sage serve --young-generation 0; default 4 MB)
 *   SAGE_BENCH_PROFILE=dir npx tsx bench/channels.ts            # CPU profile of the server (whole run)
 *   SAGE_BENCH_TAP_PROFILE=dir npx tsx bench/channels.ts        # CPU profile of the server during the taps only
 *   SAGE_BENCH_HEAP_SNAPSHOT=dir npx tsx bench/channels.ts      # heap snapshot of the server with N waiting
 *   SAGE_BENCH_DIST=dir npx tsx bench/channels.ts               # the server from another build than dist/
 *   SAGE_BENCH_STALLS=30 npx tsx bench/channels.ts              # the server's event-loop stalls and GCs over 30 ms, with their times
 *
 * With C taps in flight every tap waits for the ones ahead of it on the server's one event loop, so
 * its p99 is mostly queueing (≈ C × the server's time per tap); --rate measures a tap at a given
 * arrival rate instead (20/s: a busy team, not a flood), which queues only when the server's time
 * per tap nears 1/R.
 *
 * Goals: RSS ≤ 200 MB and tap → tool-start p99 ≤ 50 ms. The server is a child process
 * (bench/channels-server.mjs, plain node over dist/ as `sage serve` runs: run `npm run build`
 * first), so the platform (this process: a loopback fake Bot API or webhook peer, and the
 * people tapping) is not counted in its RSS or its event loop. The last line is `BENCH_RESULT {json}`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyWebhookSignature, WEBHOOK_PATH, webhookSignatureHeaders } from '../src/channels/webhook/webhook-adapter.js';
import { SERVER_HEAP_GROWTH_PERCENT, SERVER_SEMI_SPACE_MB } from '../src/server/heap-growth.js';
import { BENCH_TELEGRAM_TOKEN, TelegramPlatform } from './support/telegram-platform.js';

const SECRET = 'bench-webhook-secret';
/** MB per semi-space, as `sage serve --young-generation` (its default unless SAGE_BENCH_YOUNG_GENERATION; 0: V8's own). */
const youngGenerationMb = Number(process.env['SAGE_BENCH_YOUNG_GENERATION'] ?? SERVER_SEMI_SPACE_MB);
const GOAL = { rssMb: 200, p99Ms: 50 };

function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}

const now = () => performance.timeOrigin + performance.now();
const here = dirname(fileURLToPath(import.meta.url));
/** The build the server runs: dist/, or SAGE_BENCH_DIST (channels-server.mjs reads it too). */
const distDir = process.env['SAGE_BENCH_DIST'] ?? join(here, '../dist');

/** The server runs from dist/: a source file newer than its build means the figures are for old code. */
function staleBuild(): string[] {
  const out: string[] = [];
  for (const dir of ['channels', 'channels/webhook', 'channels/telegram', 'server', 'durable', 'store', 'loop', 'permission']) {
    for (const f of readdirSync(join(here, '../src', dir)).filter((n) => n.endsWith('.ts') && !n.endsWith('.test.ts'))) {
      const built = join(distDir, dir, f.replace(/\.ts$/, '.js'));
      if (!existsSync(built) || statSync(built).mtimeMs < statSync(join(here, '../src', dir, f)).mtimeMs) out.push(`src/${dir}/${f}`);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The platform: a loopback peer that receives Sage's posts, and the people in the chats.

interface Prompt {
  messageId: string;
  command: string;
}

type HeapSpaces = Record<string, { committed: number; used: number }>;

function spacesText(spaces: HeapSpaces): string {
  return Object.entries(spaces).map(([name, s]) => `${name.replace(/_space$/, '')} ${s.committed}/${s.used}`).join(', ');
}

interface SqliteCounts {
  commits: number;
  autocommits: number;
  commitMs: number;
}

class Platform {
  readonly prompts = new Map<string, Prompt>();
  /** Posts Sage made (messages and edits). */
  posts = 0;
  readonly done = new Set<string>();
  rejected = 0;
  private waiters: Array<() => void> = [];
  private server!: http.Server;
  url = '';

  async listen(): Promise<void> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : null);
        if (!verifyWebhookSignature(SECRET, { timestamp: header('x-sage-timestamp'), signature: header('x-sage-signature') }, raw, Date.now()).ok) {
          this.rejected++;
          res.writeHead(401).end();
          return;
        }
        this.posts++;
        const body = JSON.parse(raw.toString('utf8')) as { messageId: string; chatId: string; text: string; edit?: boolean; approval?: { options: { value: string; command: string }[] } };
        const once = body.approval?.options.find((o) => o.value === 'once');
        if (once && !body.edit) this.prompts.set(body.chatId, { messageId: body.messageId, command: once.command });
        if (!body.edit && body.text === `done`) this.done.add(body.chatId);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        for (const w of this.waiters.splice(0)) w();
      });
    });
    this.server.keepAliveTimeout = 60_000;
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
  }

  /** Resolves when `check` holds (re-checked after each post Sage makes), or rejects after `ms`. */
  async until(check: () => boolean, ms: number, what: string): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

let resets = 0;

/**
 * A person's message (or tap, with the message that carried the button), signed as the relay
 * would; a connection reset (a kept-alive socket the server closed as it was reused) is retried.
 */
async function inbound(url: string, body: Record<string, unknown>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await inboundOnce(url, body);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET' || attempt >= 4) throw error;
      resets++;
    }
  }
}

function inboundOnce(url: string, body: Record<string, unknown>): Promise<void> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(url + WEBHOOK_PATH, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...webhookSignatureHeaders(SECRET, payload, Date.now()) } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`inbound POST answered ${res.statusCode}`))));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Runs `work` over `items`, `concurrency` at a time. */
async function pool<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  }));
}

/** The chat platform as the benchmark drives it: the people's side of one adapter. */
interface Peer {
  /** What the server's adapter is pointed at (the webhook's outboundUrl, Telegram's apiRoot). */
  readonly url: string;
  /** Every chat's person writes `text`; resolves when the platform handed all of it to Sage. */
  sayAll(ids: readonly string[], text: string, serverUrl: string): Promise<void>;
  /** Approvals with a "once" button that reached the chats. */
  prompts(): number;
  /** Chats whose run said "done". */
  done(): number;
  /** Calls Sage made to the platform (posts, edits, callback answers). */
  posts(): number;
  /** Taps "once" in chat `id`; resolves when the platform has Sage's answer to the tap. */
  tap(id: string, serverUrl: string): Promise<void>;
  until(check: () => boolean, ms: number, what: string): Promise<void>;
  /** A line of what went wrong on the wire (bad signatures, resets). */
  health(): string;
  close(): Promise<void>;
}

function webhookPeer(platform: Platform): Peer {
  return {
    url: platform.url,
    sayAll: (ids, text, serverUrl) => pool(ids, 32, (id) => inbound(serverUrl, { chatId: id, senderId: id, senderName: `person ${id}`, text })),
    prompts: () => platform.prompts.size,
    done: () => platform.done.size,
    posts: () => platform.posts,
    tap: (id, serverUrl) => {
      const prompt = platform.prompts.get(id)!;
      return inbound(serverUrl, { chatId: id, senderId: id, text: prompt.command, messageId: prompt.messageId });
    },
    until: (check, ms, what) => platform.until(check, ms, what),
    health: () => `${platform.rejected} bad signatures, ${resets} connection resets retried`,
    close: () => platform.close(),
  };
}

function telegramPeer(platform: TelegramPlatform): Peer {
  return {
    url: platform.url,
    sayAll: async (ids, text) => {
      for (const id of ids) platform.say(id, text);
    },
    prompts: () => platform.promptCount,
    done: () => platform.doneCount,
    posts: () => platform.posts,
    tap: (id) => platform.tap(id),
    until: (check, ms, what) => platform.until(check, ms, what),
    health: () => 'long polling',
    close: () => platform.close(),
  };
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

async function main(): Promise<void> {
  const chats = Number(arg('chats', '1000'));
  const concurrency = Number(arg('concurrency', '16'));
  const rate = process.argv.includes('--rate') ? Number(arg('rate', '20')) : undefined;
  // Neither --rate nor --concurrency: the three phases (20 taps/s, 100 taps/s, 16 in flight).
  const both = rate === undefined && !process.argv.includes('--concurrency');
  if (rate !== undefined && !(rate > 0)) throw new Error('--rate takes taps per second (> 0)');
  const mode = both ? `20 taps/s for 40% of the chats, 100 taps/s for 30%, then ${concurrency} taps in flight` : rate ? `${rate} taps/s` : `${concurrency} taps in flight`;
  const dir = mkdtempSync(join(tmpdir(), 'sage-bench-channels-'));
  const script = join(dir, 'script.json');
  // The tool that asks: Write (after a Read, as Write requires for a file that exists) by default;
  // `--tool bash` runs `touch` instead, which adds a process fork per tap to the server's event loop.
  const tool = arg('tool', 'write');
  writeFileSync(join(dir, 'bench-out.txt'), 'x\n');
  const ask = tool === 'bash' ? [{ name: 'Bash', input: { command: 'touch bench-out.txt' } }] : [{ name: 'Read', input: { file_path: 'bench-out.txt' } }, { name: 'Write', input: { file_path: 'bench-out.txt', content: 'x\n' } }];
  writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: ask }, { text: 'done' }] }));
  // The issue's set-up is the fake Telegram server; --platform webhook drives the generic webhook instead.
  const platformName = arg('platform', 'telegram');
  if (platformName !== 'telegram' && platformName !== 'webhook') throw new Error('--platform takes telegram or webhook');
  let peer: Peer;
  if (platformName === 'telegram') {
    const telegram = new TelegramPlatform();
    await telegram.listen();
    peer = telegramPeer(telegram);
  } else {
    const webhook = new Platform();
    await webhook.listen();
    peer = webhookPeer(webhook);
  }
  const load0 = loadavg()[0]!;
  // What `sage serve` does: SQLite synchronous=FULL unless SAGE_SQLITE_SYNCHRONOUS=normal (the child inherits it).
  const synchronous = (process.env['SAGE_SQLITE_SYNCHRONOUS'] ?? 'full').toLowerCase();
  const idleSuspendMs = process.env['SAGE_BENCH_IDLE_SUSPEND_MS'] ? Number(process.env['SAGE_BENCH_IDLE_SUSPEND_MS']) : undefined;
  const maxWaiting = process.env['SAGE_BENCH_MAX_WAITING'] ? Number(process.env['SAGE_BENCH_MAX_WAITING']) : undefined;
  if (!existsSync(join(distDir, 'channels/start-channels.js'))) throw new Error(`bench/channels.ts runs the server from ${distDir}: run npm run build first`);
  // Another build (SAGE_BENCH_DIST) is of other sources: its age says nothing.
  const stale = process.env['SAGE_BENCH_DIST'] ? [] : staleBuild();
  if (stale.length) console.log(`  note: dist/ is older than ${stale.length} source file(s) (${stale.slice(0, 3).join(', ')}…); npm run build measures the current code`);
  const env = { ...process.env, SAGE_BENCH_SECRET: SECRET, SAGE_BENCH_TOOL: tool === 'bash' ? 'Bash' : 'Write', SAGE_BENCH_DIR: dir, SAGE_BENCH_CHATS: String(chats), SAGE_BENCH_PEER: peer.url, SAGE_BENCH_PLATFORM: platformName, SAGE_BENCH_TELEGRAM_TOKEN: BENCH_TELEGRAM_TOKEN, SAGE_BENCH_MODEL: `scripted:${script}` };
  const child: ChildProcess = fork(join(here, 'channels-server.mjs'), [], {
    env,
    // SAGE_BENCH_PROFILE=dir: a CPU profile of the server process (node --cpu-prof), written when it exits.
    // The young generation `sage serve` gives its server process (--young-generation; 0: V8's own).
    execArgv: [...(youngGenerationMb > 0 ? [`--max-semi-space-size=${youngGenerationMb}`] : []), ...(process.env['SAGE_BENCH_PROFILE'] ? ['--cpu-prof', '--cpu-prof-dir', process.env['SAGE_BENCH_PROFILE']] : [])],
    stdio: 'inherit',
  });
  const query = <T>(type: string): Promise<T> =>
    new Promise((resolve) => {
      const on = (m: { type: string }) => {
        if (m.type !== type) return;
        child.off('message', on);
        resolve(m as T);
      };
      child.on('message', on);
      child.send({ type });
    });
  const { url, rss: readyRss, memory: readyMemory } = await new Promise<{ url: string; rss: number; memory: NodeJS.MemoryUsage }>((resolve, reject) => {
    child.once('message', (m: { type: string; url: string; rss: number; memory: NodeJS.MemoryUsage }) => (m.type === 'ready' ? resolve(m) : reject(new Error(String(m.type)))));
    child.once('exit', (code) => reject(new Error(`the server exited with ${code}`)));
  });
  try {
    const ids = Array.from({ length: chats }, (_, i) => String(100_000 + i));
    console.log(`channels bench: ${chats} chats over the ${platformName} adapter, ${mode}, tool ${tool}, SQLite synchronous=${synchronous}, heap growth ${process.env['SAGE_BENCH_HEAP_GROWTH'] ?? SERVER_HEAP_GROWTH_PERCENT}%, young generation ${youngGenerationMb ? `${youngGenerationMb} MB` : "V8's own"}${idleSuspendMs ? `, runs released after ${idleSuspendMs} ms idle` : ''}${maxWaiting !== undefined ? `, at most ${maxWaiting} waiting in memory` : ''}; ${cpus().length} CPUs, load ${load0.toFixed(2)}; server RSS at start ${(readyRss / 2 ** 20).toFixed(0)} MB`);

    // 1. Every chat starts a run; all of them end up waiting on an approval at once.
    const t0 = performance.now();
    await peer.sayAll(ids, 'please touch the file', url);
    await peer.until(() => peer.prompts() >= chats, 300_000, `${chats} approvals`);
    const startSeconds = (performance.now() - t0) / 1000;
    const { rss: waitingRss, memory: waitingMemory, spaces: waitingSpaces } = await query<{ rss: number; memory: NodeJS.MemoryUsage; spaces: HeapSpaces }>('rss');
    const perChatKb = (waitingRss - readyRss) / chats / 1024;
    console.log(`  ${chats} chats waiting on an approval after ${startSeconds.toFixed(1)} s; server RSS ${(waitingRss / 2 ** 20).toFixed(0)} MB (${perChatKb.toFixed(0)} KB per waiting chat over the start)`);
    // Where the RSS is: V8's heap (JS objects), external (Buffers, SQLite's own memory is not in it), the rest native.
    const mb = (n: number) => (n / 2 ** 20).toFixed(0);
    const heapPerChatKb = (waitingMemory.heapUsed - readyMemory.heapUsed) / chats / 1024;
    console.log(`  heap used ${mb(readyMemory.heapUsed)} → ${mb(waitingMemory.heapUsed)} MB (${heapPerChatKb.toFixed(0)} KB per waiting chat), heap total ${mb(waitingMemory.heapTotal)} MB, external ${mb(waitingMemory.external)} MB, RSS outside the heap ${mb(waitingRss - waitingMemory.heapTotal)} MB`);
    console.log(`  heap spaces (MB committed/used): ${spacesText(waitingSpaces)}`);

    // 2. Every chat taps "once".
    type Counters = { cpu: NodeJS.CpuUsage; sqlite: SqliteCounts; storeCalls: Record<string, number> };
    // What the server does while all the chats wait and nobody taps (long polls, leases, timers): it
    // is in the per-tap CPU of an open loop, which spreads its taps over time.
    const idle0 = await query<Counters>('taps');
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const idle1 = await query<Counters>('taps');
    const idleCpuMsPerSecond = (idle1.cpu.user + idle1.cpu.system - idle0.cpu.user - idle0.cpu.system) / 1000 / 3;
    console.log(`  server CPU while they wait, nobody tapping: ${idleCpuMsPerSecond.toFixed(1)} ms a second; store calls in 3 s: ${Object.entries(idle1.storeCalls).map(([k, n]) => [k, n - (idle0.storeCalls[k] ?? 0)] as const).filter(([, n]) => n > 0).map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
    const before = await query<Counters>('taps');
    const posts0 = peer.posts();
    const tappedAt = new Map<string, number>();
    const t1 = performance.now();
    const tap = async (id: string) => {
      tappedAt.set(id, now());
      await peer.tap(id, url);
    };
    /** The taps of one phase: an open loop at `perSecond`, or a closed one with `inFlight` taps in flight. */
    const phase = async (list: string[], how: { perSecond: number } | { inFlight: number }) => {
      if ('perSecond' in how) {
        // Open loop: tap i leaves at i/R s whether or not the taps before it were answered (a tap sent
        // late, when this process was busy, is timed from when it left).
        const start = performance.now();
        const taps: Promise<void>[] = [];
        for (let i = 0; i < list.length; i++) {
          const due = start + (i * 1000) / how.perSecond - performance.now();
          if (due > 0) await new Promise((resolve) => setTimeout(resolve, due));
          taps.push(tap(list[i]!));
        }
        await Promise.all(taps);
      } else {
        await pool(list, how.inFlight, tap);
      }
    };
    const first = Math.round(chats * 0.4);
    const second = Math.round(chats * 0.7);
    const phases: Array<{ label: string; ids: string[]; how: { perSecond: number } | { inFlight: number } }> = both
      ? [
          { label: '20 taps/s', ids: ids.slice(0, first), how: { perSecond: 20 } },
          { label: '100 taps/s', ids: ids.slice(first, second), how: { perSecond: 100 } },
          { label: `${concurrency} taps in flight`, ids: ids.slice(second), how: { inFlight: concurrency } },
        ]
      : [{ label: mode, ids, how: rate ? { perSecond: rate } : { inFlight: concurrency } }];
    /** The server's counters where each phase began (the last phase ends at the stats below). */
    const marks: Array<{ counters: Counters; posts: number; at: number }> = [{ counters: before, posts: posts0, at: t1 }];
    let answered = 0;
    for (const [i, p] of phases.entries()) {
      if (i > 0) {
        // The runs of the phase before finish (their "done") first, so this one does not queue behind them.
        await peer.until(() => peer.done() >= answered, 300_000, `${answered} answers`);
        marks.push({ counters: await query<Counters>('taps'), posts: peer.posts(), at: performance.now() });
      }
      await phase(p.ids, p.how);
      answered += p.ids.length;
    }
    const tapSeconds = (performance.now() - t1) / 1000;
    await peer.until(() => peer.done() >= chats, 300_000, `${chats} answers`);
    const allDone = performance.now();

    // 3. Figures.
    const stats = await query<{ starts: Array<{ chatId: string; at: number }>; rss: number; peakRss: number; memory: NodeJS.MemoryUsage; spaces: HeapSpaces; cpu: NodeJS.CpuUsage; sqlite: SqliteCounts; storeCalls: Record<string, number> }>('stats');
    // Per tap of a phase, from its first tap to its last "done" (the tool, the model's next turn, the
    // chat updates): counts, and the server's CPU time, which the load inflates less than wall time.
    // The open-loop phase's CPU includes what the server does while it waits between taps (long
    // polls, leases), and its commits are not grouped with other taps'.
    const perTapOf = (from: Counters, to: Counters, taps: number, posts: number, seconds: number) => ({
      seconds,
      cpuMs: (to.cpu.user + to.cpu.system - from.cpu.user - from.cpu.system) / 1000 / taps,
      commits: (to.sqlite.commits - from.sqlite.commits) / taps,
      autocommits: (to.sqlite.autocommits - from.sqlite.autocommits) / taps,
      commitBlockedMs: (to.sqlite.commitMs - from.sqlite.commitMs) / taps,
      platformPosts: posts / taps,
      storeCalls: Object.fromEntries(
        Object.entries(to.storeCalls)
          .map(([name, n]) => [name, Math.round(((n - (from.storeCalls[name] ?? 0)) / taps) * 100) / 100] as const)
          .filter(([, n]) => n > 0)
          .sort((a, b) => b[1] - a[1]),
      ),
    });
    const ends = [...marks.slice(1), { counters: stats as Counters, posts: peer.posts(), at: allDone }];
    const perTapByPhase = phases.map((p, i) => perTapOf(marks[i]!.counters, ends[i]!.counters, p.ids.length, ends[i]!.posts - marks[i]!.posts, (ends[i]!.at - marks[i]!.at) / 1000));
    // The figures of the run as before phases: the last phase's (the flood, or the one phase asked for).
    const perTap = perTapByPhase.at(-1)!;
    const latenciesOf = (list: string[]) => {
      const wanted = new Set(list);
      const out = stats.starts.filter((s) => wanted.has(s.chatId) && tappedAt.has(s.chatId)).map((s) => s.at - tappedAt.get(s.chatId)!).sort((a, b) => a - b);
      if (out.length !== list.length) throw new Error(`${out.length} tool starts for ${list.length} taps`);
      return out;
    };
    const measured = phases.map((p, i) => {
      const latencies = latenciesOf(p.ids);
      const closed = 'inFlight' in p.how ? { tapsPerSecond: p.ids.length / perTapByPhase[i]!.seconds } : {};
      return { label: p.label, taps: p.ids.length, p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99), max: latencies.at(-1)!, ...closed };
    });
    const { p50, p95, p99 } = measured.at(-1)!;
    const peakMb = stats.peakRss / 2 ** 20;
    const load1 = loadavg()[0]!;
    for (const m of measured) {
      const saturated = m.tapsPerSecond ? `; a closed loop: ${m.tapsPerSecond.toFixed(0)} taps/s, the server's throughput (no goal: its latency is the queue)` : '';
      console.log(`  ${m.taps} taps at ${m.label}: tap → tool start p50 ${m.p50.toFixed(1)} ms, p95 ${m.p95.toFixed(1)} ms, p99 ${m.p99.toFixed(1)} ms, max ${m.max.toFixed(1)} ms${saturated}`);
    }
    console.log(`  all taps in ${tapSeconds.toFixed(1)} s (${(chats / tapSeconds).toFixed(0)}/s)`);
    phases.forEach((p, i) => {
      const t = perTapByPhase[i]!;
      console.log(`  per tap at ${p.label} (until its run said "done"): server CPU ${t.cpuMs.toFixed(1)} ms, ${t.commits.toFixed(2)} SQLite commits + ${t.autocommits.toFixed(2)} single-statement writes, event loop blocked ${t.commitBlockedMs.toFixed(1)} ms in COMMIT, ${t.platformPosts.toFixed(2)} posts to the platform`);
      console.log(`    store calls per tap: ${Object.entries(t.storeCalls).map(([name, n]) => `${name} ${n}`).join(', ')}`);
    });
    console.log(`  at the end: heap used ${(stats.memory.heapUsed / 2 ** 20).toFixed(0)} MB, heap total ${(stats.memory.heapTotal / 2 ** 20).toFixed(0)} MB; spaces ${spacesText(stats.spaces)}`);
    console.log(`  server RSS: peak ${peakMb.toFixed(0)} MB, ${(stats.rss / 2 ** 20).toFixed(0)} MB at the end; ${peer.health()}; load ${load1.toFixed(2)}`);
    const goals = [
      { goal: `server RSS peak ≤ ${GOAL.rssMb} MB with ${chats} chats (MB)`, value: peakMb, met: peakMb <= GOAL.rssMb },
      ...measured.filter((m) => !m.tapsPerSecond).map((m) => ({ goal: `tap → tool start p99 ≤ ${GOAL.p99Ms} ms, ${m.label} (ms)`, value: m.p99, met: m.p99 <= GOAL.p99Ms })),
    ];
    for (const g of goals) console.log(`  goal ${g.goal}: ${g.value.toFixed(1)} — ${g.met ? 'met' : 'MISSED'}`);
    console.log(
      `BENCH_RESULT ${JSON.stringify({ bench: 'channels', platform: platformName, chats, ...(both ? { phases: measured.map((m, i) => ({ ...m, perTap: perTapByPhase[i] })) } : rate ? { rate } : { concurrency }), tool, synchronous, youngGenerationMb, ...(idleSuspendMs ? { idleSuspendMs } : {}), ...(maxWaiting !== undefined ? { maxWaiting } : {}), startSeconds, tapsPerSecond: chats / tapSeconds, p50Ms: p50, p95Ms: p95, p99Ms: p99, peakRssMb: peakMb, waitingRssMb: waitingRss / 2 ** 20, startRssMb: readyRss / 2 ** 20, perWaitingChatKb: perChatKb, idleCpuMsPerSecond, heapPerWaitingChatKb: heapPerChatKb, perTap, loadavg: { before: load0, after: load1 }, goals })}`,
    );
  } finally {
    child.send({ type: 'stop' });
    await new Promise((resolve) => child.once('exit', resolve));
    agent.destroy();
    await peer.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
    console.error(error);
    process.exit(1);
  });
