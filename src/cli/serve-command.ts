import { Command, InvalidArgumentError, Option } from 'commander';
import pino from 'pino';
import { checkDbPath } from './output-path.js';
import { environmentHelp } from './environment-help.js';
import { channelBannerLines } from './serve-banner.js';
import { PortInUseError } from './port-in-use-error.js';
import { checkServeModel } from './serve-model.js';
import { chooseLogFormat, humanLogStream, type LogFormat } from './log-lines.js';
import { openStore } from '../store/open-store.js';
import { DurableRunDriver, SERVER_MAX_WAITING_IN_MEMORY } from '../server/durable-driver.js';
import { maxWaitingInMemorySchema } from '../durable/durable-runner.js';
import { startServer } from '../server/server.js';
import { limitHeapGrowth, SERVE_PARENT_ENV, SERVER_HEAP_GROWTH_PERCENT, SERVER_SEMI_SPACE_MB, YOUNG_GENERATION_MAX_MB, youngGenerationMb } from '../server/heap-growth.js';
import { resolveServerPolicy } from '../runtime/server-policy.js';
import { channelFactories, loadChannelsConfig, startChannels } from '../channels/serve.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65_535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError('a limit is a whole number of at least 1');
  return n;
}

/** `--max-waiting-in-memory`: digits only (no `1e3`, no `0x10`), then the runner's own schema. */
function waitingCap(value: string): number {
  const parsed = maxWaitingInMemorySchema.safeParse(/^\d+$/.test(value) ? Number(value) : Number.NaN);
  if (!parsed.success) throw new InvalidArgumentError('a count of runs is a whole number of 0 or more');
  return parsed.data;
}

/** `--heap-growth`: a whole percent, 0 (V8's own) to 300. */
function heapGrowth(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value) || n > 300) throw new InvalidArgumentError('heap growth is a whole percent from 0 (V8 decides) to 300');
  return n;
}

/** `--young-generation`: applied by bin.ts (src/cli/serve-process.ts) before this runs, checked here. */
function youngGeneration(value: string): number {
  const mb = youngGenerationMb(value);
  if (mb === undefined) throw new InvalidArgumentError(`the young generation is a whole number of MB from 0 (V8 decides) to ${YOUNG_GENERATION_MAX_MB}`);
  return mb;
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

interface ServeFlags {
  host: string;
  port: number;
  db?: string;
  tokensFile?: string;
  model?: string;
  root: string[];
  allowScripted?: boolean;
  scriptedDir: string[];
  maxRunsPerUser?: number;
  maxPendingPerUser?: number;
  maxStreamsPerUser?: number;
  maxWaitingInMemory?: number;
  heapGrowth?: number;
  permissionModes?: string;
  allowClientRules?: boolean;
  allowUnsandboxedAgents?: boolean;
  agents?: string;
  channels?: string;
  deny: string[];
  ask: string[];
  logLevel: string;
  logFormat?: LogFormat;
}

/**
 * `sage serve`: the API and the web UI. Stops gracefully on SIGINT/SIGTERM: new requests are
 * refused, event streams end (clients resume elsewhere with Last-Event-ID), runs are left
 * resumable in the store.
 */
export function registerServeCommand(program: Command): Command {
  return program
    .command('serve')
    .description('serve the HTTP API (runs, live events, interactions, permissions, audit) and the web UI')
    .addHelpText('after', () => environmentHelp('serve'))
    .option('--host <address>', 'address to listen on; anything but loopback requires tokens', '127.0.0.1')
    .option('--port <n>', 'port to listen on (0 picks a free one)', port, 7878)
    .option('--db <path>', 'SQLite database path (default .sage/sage.db); SAGE_DATABASE_URL selects Postgres')
    .option('--tokens-file <path>', 'JSON file of bearer tokens: { "tokens": [{ "token", "userId", "role" }] } (or set SAGE_TOKENS="tok=alice,tok2=bob:admin")')
    .option('--model <provider:name>', 'the model for runs that name none (default SAGE_MODEL), checked at start like sage run\'s (spec, key; scripted:<file> is relative to the current folder)')
    .option('--root <dir>', 'a directory runs may work in (repeatable; default the current directory); a run gets the deny and ask rules of each folder from its cwd up to its repository root (.git), never above this one, and up to this one without .git', collect, [])
    .option('--allow-scripted', 'accept scripted:<file> models from clients, files under the --root folders only (demos and tests)')
    .option('--scripted-dir <dir>', 'accept scripted:<file> models from clients, files under this folder only (repeatable; symlinks resolved, 1 MiB cap)', collect, [])
    .option('--max-runs-per-user <n>', 'runs in flight (not finished) one user may have, a chat sender (<channel>:<senderId>) included (default 50)', positiveInt)
    .option('--max-pending-per-user <n>', 'interactions waiting for an answer one user may have before new runs are refused (default 100)', positiveInt)
    .option('--max-streams-per-user <n>', 'event streams (SSE) one user may keep open on this instance (default 16)', positiveInt)
    .option('--max-waiting-in-memory <n>', `runs waiting for an answer kept in memory; beyond it the longest-waiting go to the store and resume from it when answered (default ${SERVER_MAX_WAITING_IN_MEMORY}; 0: none)`, waitingCap)
    .option('--heap-growth <percent>', `how far the JavaScript heap may grow past what survived its last full collection before the next one; lower keeps memory down for many waiting runs at some CPU (default ${SERVER_HEAP_GROWTH_PERCENT}; 0: V8 decides, up to 300%)`, heapGrowth)
    .option('--young-generation <MB>', `the JavaScript heap's young generation: each of its two halves at most this many MB (V8's --max-semi-space-size; the server runs in a child Node process given it). Lower keeps memory down at some CPU (default ${SERVER_SEMI_SPACE_MB}; 0: V8 decides, 16 on most machines; no child process when node runs with flags of its own)`, youngGeneration)
    .option('--permission-modes <list>', 'the permission modes clients may ask for, comma-separated (default default,acceptEdits,plan,dontAsk; bypassPermissions only if listed)')
    .option('--allow-client-rules', 'let non-admin clients add allow rules (POST /runs "allow", their own per-user allow list); default: admins only')
    .option('--channels <file>', 'chat channels config (JSON: the "channels" object, or { "channels": {...} }); default: the "channels" key of the host settings')
    .option('--agents <list>', 'external agents clients may start (POST /runs "agent"), comma-separated, e.g. claude-code; default: none')
    .option('--allow-unsandboxed-agents', 'let clients start an external agent with "sandbox": "off" (outside its OS sandbox); default: refused (403)')
    .option('--deny <rule>', 'a server-wide deny rule for every web run, before anything a client sends (repeatable)', collect, [])
    .option('--ask <rule>', 'a server-wide ask rule for every web run (repeatable)', collect, [])
    .addOption(new Option('--log-level <level>', 'log level').choices(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'))
    .addOption(new Option('--log-format <format>', 'log lines: pretty (time, level, message) or json (pino, one object a line); default pretty on a terminal, json otherwise').choices(['pretty', 'json']))
    .action(async (flags: ServeFlags) => {
      const options = { name: 'sage-server', level: flags.logLevel };
      const logger = chooseLogFormat(flags.logFormat, process.stdout.isTTY === true) === 'pretty' ? pino(options, humanLogStream(process.stdout)) : pino(options);
      limitHeapGrowth(flags.heapGrowth ?? SERVER_HEAP_GROWTH_PERCENT);
      // The operator's policy (flags and the `server` key of the managed and user settings) loads
      // before anything opens: a policy that does not load stops the server.
      const serverPolicy = resolveServerPolicy({ flags: { permissionModes: flags.permissionModes, allowClientRules: flags.allowClientRules, ...(flags.allowUnsandboxedAgents ? { allowUnsandboxedAgents: true } : {}), deny: flags.deny, ask: flags.ask, ...(flags.agents !== undefined ? { agents: flags.agents } : {}) } });
      // The default model is checked as `sage run` checks its own (spec, file, key): exit 2, before anything opens.
      const defaultModel = checkServeModel(flags.model, process.env, process.cwd());
      // A folder or an unwritable --db is the flag's mistake: exit 2, said before SQLite tries it.
      if (flags.db) checkDbPath(flags.db);
      const store = await openStore({ db: flags.db });
      let driver: DurableRunDriver | undefined;
      let server;
      let channels: Awaited<ReturnType<typeof startChannels>> | undefined;
      try {
        // Opening the driver also resumes runs a previous server left answered or orphaned.
        driver = await DurableRunDriver.open(store, {
          roots: flags.root.length > 0 ? flags.root : [process.cwd()],
          ...(defaultModel !== undefined ? { defaultModel } : {}),
          allowScriptedModels: flags.allowScripted === true,
          scriptedDirs: flags.scriptedDir,
          serverPolicy,
          ...(flags.maxWaitingInMemory !== undefined ? { maxWaitingInMemory: flags.maxWaitingInMemory } : {}),
        });
        const limits = { runsPerUser: flags.maxRunsPerUser, pendingInteractionsPerUser: flags.maxPendingPerUser, streamsPerUser: flags.maxStreamsPerUser };
        // Chat channels in the same process, over the same store and runner; a bad config stops the start.
        const channelsConfig = loadChannelsConfig(flags.channels);
        channels = channelsConfig ? await startChannels({ store, driver, config: channelsConfig.config, source: channelsConfig.source, factories: await channelFactories(channelsConfig.config), log: logger, limits }) : undefined;
        const running = channels;
        server = await startServer({
          store,
          driver,
          host: flags.host,
          port: flags.port,
          tokensFile: flags.tokensFile,
          logger,
          closeStore: true,
          limits,
          ...(running ? { extraRoutes: running.routes, beforeShutdown: () => running.stop() } : {}),
        });
      } catch (error) {
        await channels?.stop().catch(() => {});
        await driver?.close();
        await store.close();
        if ((error as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new PortInUseError(flags.host, flags.port, { cause: error });
        }
        throw error;
      }
      // One write with the serving line: a reader that sees the URL sees the channels' lines too.
      const banner = [`Sage is serving ${server.url} (store: ${store.location}${server.server.auth ? '' : '; no auth, loopback only'})`];
      if (channels) banner.push(...channelBannerLines(server.url, channels.connected, channels.endpoints));
      process.stdout.write(`${banner.join('\n')}\n`);
      await new Promise<void>((resolve) => {
        const stop = (signal: string) => {
          logger.info({ signal }, 'shutting down');
          void server.close().then(resolve);
        };
        process.once('SIGINT', () => stop('SIGINT'));
        process.once('SIGTERM', () => stop('SIGTERM'));
        // Started by `sage serve`'s own process (src/cli/serve-process.ts): stop with it, even when
        // it was killed with no chance to pass on a signal; the channel alone keeps nothing running.
        if (process.env[SERVE_PARENT_ENV] && process.channel) {
          process.channel.unref();
          process.once('disconnect', () => stop('parent process exited'));
        }
      });
    });
}
