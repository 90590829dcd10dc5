import type { RunHost } from '../runtime/run-host.js';
import { assertRunCapacity, resolveUserLimits, type UserLimits } from '../runtime/user-limits.js';
import { serverGrant } from '../runtime/web-gate.js';
import type { Store } from '../store/index.js';
import { channelField, type ChannelAdapter, type ChannelAdapterFactory, type ChannelLogger, type ChannelRoute } from './adapter.js';
import { parseChannelsConfig } from './config.js';
import { ChannelConfigError } from './errors.js';
import { ChannelHub } from './hub.js';
import { storeSeenIds, systemChannelClock, type ChannelClock } from './seen-ids.js';

export interface StartChannelsOptions {
  store: Store;
  driver: RunHost;
  /** The `channels` object from the settings or `--channels FILE`. */
  config: unknown;
  /** Where the config came from, for errors (`channels`, or the file's path). */
  source?: string;
  factories: readonly ChannelAdapterFactory[];
  env?: NodeJS.ProcessEnv;
  log: ChannelLogger & { child?(bindings: object): ChannelLogger };
  /** Overrides every channel's approval timeout (tests). */
  interactionTimeoutMs?: number;
  /** The clock signing timestamps are checked against (a fake one in tests). Default Date.now. */
  clock?: ChannelClock;
  /** The server's per-user limits (`--max-runs-per-user`, …): a chat sender's runs count against their principal's. */
  limits?: Partial<UserLimits>;
}

export interface ChannelEndpoints {
  channel: string;
  inbound: Array<{ method: string; path: string }>;
  outbound?: string;
}

export interface RunningChannels {
  hub: ChannelHub;
  /** The adapters' HTTP routes, for the server to mount. */
  routes: ChannelRoute[];
  /** One line per adapter: what it connected to. */
  connected: string[];
  /** Each channel's inbound routes (paths under the server) and where it sends, for the start banner. */
  endpoints: ChannelEndpoints[];
  stop(): Promise<void>;
}

/**
 * Builds the adapters from config, and the hub over the server's store and runner; a config that
 * does not validate, or an adapter that cannot connect, stops here before anything is served.
 * Chat runs use the server's model (`--model`), its roots (a channel's `cwd` must be one) and its
 * gate (server deny/ask rules, the host's settings).
 */
export async function startChannels(options: StartChannelsOptions): Promise<RunningChannels | undefined> {
  const parsed = parseChannelsConfig(options.config, options.factories, options.source ?? 'channels');
  if (parsed.length === 0) return undefined;
  const env = options.env ?? process.env;
  const source = options.source ?? 'channels';
  const clock = options.clock ?? systemChannelClock;
  const channels = parsed.map(({ factory, name, config }) => {
    const log = options.log.child ? options.log.child({ channel: name }) : options.log;
    // In the store: a delivery id seen before a restart, or by another server, is still seen.
    const seenIds = storeSeenIds(options.store, name, clock, (error) => log.warn({ err: error }, `${name}: pruning expired delivery ids failed`));
    return { adapter: factory.create(config, { env, log, name, seenIds, clock }), config };
  });
  checkRoutes(channels.map((c) => c.adapter), source);
  const { driver } = options;
  const limits = resolveUserLimits(options.limits);
  // External agents (src/agents, with the ACP SDK's memory) are loaded only when a channel names one,
  // as the server's own runs load them when one is asked for.
  const resolveAgentRun = parsed.some(({ config }) => config.agent) ? (await import('../agents/resolve-agent.js')).resolveAgentRun : undefined;
  const hub = new ChannelHub({
    store: options.store,
    runner: driver.runner,
    // Admitted as a web run is: the host's settings and MCP servers for its folder, an agent's sandbox.
    admitRun: (request) => driver.admit(request),
    model: () => driver.runPolicy.modelSpec(undefined),
    cwd: (requested) => driver.runPolicy.cwd(requested),
    serverGrant: () => serverGrant('user', driver.serverPolicy),
    channels,
    assertRunCapacity: (userId) => assertRunCapacity(options.store, userId, limits),
    ...(resolveAgentRun
      ? {
          agentRun: (name: string, cwd: string) => {
            driver.serverPolicy.checkAgent(name);
            const resolved = resolveAgentRun({ name, cwd, home: driver.home });
            return { agent: resolved.agent, ...(resolved.chain ? { chain: resolved.chain } : {}) };
          },
        }
      : {}),
    log: options.log,
    ...(options.interactionTimeoutMs !== undefined ? { interactionTimeoutMs: options.interactionTimeoutMs } : {}),
  });
  let connected: string[];
  try {
    connected = await hub.start();
  } catch (error) {
    await hub.stop().catch(() => {});
    throw error;
  }
  const endpoints = channels.map(({ adapter }) => ({
    channel: adapter.name,
    inbound: adapter.routes.map((r) => ({ method: r.method, path: r.path })),
    ...(adapter.outboundUrl ? { outbound: adapter.outboundUrl } : {}),
  }));
  return { hub, routes: channels.flatMap((c) => [...c.adapter.routes]), connected, endpoints, stop: () => hub.stop() };
}

/**
 * Two channels on one inbound route would take each other's deliveries (the server matches by method
 * and exact path, so one would never be called): a named instance's default path is its own
 * (`/channels/<kind>/<name>`), but a `webhookPath` written twice stops the start here.
 */
function checkRoutes(adapters: readonly ChannelAdapter[], source: string): void {
  const owners = new Map<string, string>();
  for (const adapter of adapters) {
    for (const route of adapter.routes) {
      const key = `${route.method} ${route.path}`;
      const owner = owners.get(key);
      if (owner !== undefined && owner !== adapter.name) {
        throw new ChannelConfigError(channelField(adapter.name, undefined, source), `its inbound route ${key} is also ${channelField(owner, undefined, source)}'s; give each its own webhookPath`);
      }
      owners.set(key, adapter.name);
    }
  }
}
