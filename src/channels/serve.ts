import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ChannelAdapterFactory } from './adapter.js';
import { ChannelConfigError } from './errors.js';
import { webhookChannel } from './webhook/webhook-adapter.js';
import { whatsappAdapterFactory } from './whatsapp/adapter.js';

export { startChannels } from './start-channels.js';

/**
 * The adapters `sage serve` can start, by kind. Those built on a platform's SDK are loaded when the
 * config names their kind, not before: each SDK costs memory and start-up time in every server that
 * does not use it (figures in bench/README.md).
 */
const CHANNEL_MODULES: Readonly<Record<string, () => Promise<ChannelAdapterFactory>>> = {
  webhook: async () => webhookChannel as ChannelAdapterFactory,
  telegram: async () => (await import('./telegram/adapter.js')).telegramAdapterFactory as ChannelAdapterFactory,
  slack: async () => (await import('./slack/adapter.js')).slackAdapterFactory as ChannelAdapterFactory,
  feishu: async () => (await import('./feishu/adapter.js')).feishuAdapterFactory as ChannelAdapterFactory,
  whatsapp: async () => whatsappAdapterFactory as ChannelAdapterFactory,
};

/** Every kind this build has, in the order errors list them. */
export const CHANNEL_KINDS: readonly string[] = Object.keys(CHANNEL_MODULES);

/**
 * The factories a `channels` config needs: those of the kinds its keys name (`slack`, `slack:T123`).
 * A key of a kind this build does not have loads them all, so that parseChannelsConfig's error lists
 * every kind there is (the start stops there anyway); `undefined` loads them all too (tests, docs).
 */
export async function channelFactories(config?: unknown): Promise<ChannelAdapterFactory[]> {
  const keys = config === undefined ? CHANNEL_KINDS : typeof config === 'object' && config !== null && !Array.isArray(config) ? Object.keys(config) : [];
  const kinds = new Set(keys.map((key) => key.split(':')[0]!));
  const wanted = [...kinds].some((kind) => !Object.hasOwn(CHANNEL_MODULES, kind)) ? CHANNEL_KINDS : CHANNEL_KINDS.filter((kind) => kinds.has(kind));
  return Promise.all(wanted.map((kind) => CHANNEL_MODULES[kind]!()));
}

/**
 * The chat channels `sage serve` starts: `--channels FILE` (the `channels` object, or a settings-like
 * `{ "channels": {...} }`), else the `channels` key of the managed settings, else of the host user's
 * (`$SAGE_HOME/.sage/settings.json`). A file that cannot be read stops the start, naming it.
 */
export function loadChannelsConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): { config: unknown; source: string } | undefined {
  if (file) {
    const json = readJson(file, true);
    const config = typeof json === 'object' && json !== null && 'channels' in json ? (json as { channels: unknown }).channels : json;
    return { config, source: `${file}: channels` };
  }
  for (const candidate of [env.SAGE_MANAGED_SETTINGS, join(env.SAGE_HOME || homedir(), '.sage', 'settings.json')]) {
    if (!candidate || !existsSync(candidate)) continue;
    const json = readJson(candidate, false) as { channels?: unknown } | undefined;
    if (json?.channels !== undefined) return { config: json.channels, source: `${candidate}: channels` };
  }
  return undefined;
}

function readJson(file: string, mustExist: boolean): unknown {
  if (!existsSync(file)) {
    if (mustExist) throw new ChannelConfigError('--channels', `${file} does not exist`);
    return undefined;
  }
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new ChannelConfigError(file, `is not valid JSON (${(error as Error).message})`);
  }
}
