import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ChannelAdapterFactory } from './adapter.js';
import { ChannelConfigError } from './errors.js';
import { feishuAdapterFactory } from './feishu/adapter.js';
import { slackAdapterFactory } from './slack/adapter.js';
import { telegramAdapterFactory } from './telegram/adapter.js';
import { webhookChannel } from './webhook/webhook-adapter.js';
import { whatsappAdapterFactory } from './whatsapp/adapter.js';

export { startChannels } from './start-channels.js';

/** The adapters `sage serve` can start. */
export const CHANNEL_FACTORIES: readonly ChannelAdapterFactory[] = [webhookChannel, telegramAdapterFactory, slackAdapterFactory, feishuAdapterFactory, whatsappAdapterFactory] as readonly ChannelAdapterFactory[];

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
