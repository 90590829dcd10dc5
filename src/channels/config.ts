import { z } from 'zod';
import { CHANNEL_INSTANCE_NAME, channelField, type ChannelAdapterFactory, type ChannelCommonConfig } from './adapter.js';
import { ChannelConfigError } from './errors.js';

export interface ParsedChannel {
  factory: ChannelAdapterFactory;
  /** The channel id: the key as written, `slack` or `slack:T123`; the adapter's `name`. */
  name: string;
  config: ChannelCommonConfig & Record<string, unknown>;
}

/**
 * Validates the `channels` object (settings key or `--channels FILE`) against each adapter's own
 * schema. A key is a kind (`slack`) or a kind and an instance name (`slack:T123`), so one server can
 * serve several workspaces or bots of one platform; the key is the channel id everywhere (sessions,
 * answers, the audit). The first problem stops the start and names its field
 * (`channels.telegram.tokenEnv`, `channels["slack:T123"].botTokenEnv`).
 */
export function parseChannelsConfig(raw: unknown, factories: readonly ChannelAdapterFactory[], source = 'channels'): ParsedChannel[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ChannelConfigError(source, 'must be an object keyed by channel kind (telegram, webhook, …) or kind:name (slack:T123)');
  const out: ParsedChannel[] = [];
  for (const [key, value] of Object.entries(raw as Record<string, unknown>)) {
    const colon = key.indexOf(':');
    const kind = colon < 0 ? key : key.slice(0, colon);
    const factory = factories.find((f) => f.kind === kind);
    if (!factory) throw new ChannelConfigError(channelField(key, undefined, source), `unknown channel kind "${kind}"; this build has ${factories.map((f) => f.kind).join(', ')}`);
    if (colon >= 0 && !CHANNEL_INSTANCE_NAME.test(key.slice(colon + 1))) {
      throw new ChannelConfigError(channelField(key, undefined, source), `the instance name after "${kind}:" must be 1-64 characters of A-Z, a-z, 0-9, _ and - (e.g. "${kind}:support")`);
    }
    const given = colon >= 0 && factory.instanceDefaults && typeof value === 'object' && value !== null && !Array.isArray(value) ? { ...factory.instanceDefaults(key), ...value } : value;
    const parsed = (factory.configSchema as z.ZodType).safeParse(given);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const keys = issue.code === 'unrecognized_keys' ? ` (${(issue as { keys: string[] }).keys.join(', ')})` : '';
      throw new ChannelConfigError(channelField(key, issue.path.length ? issue.path.join('.') : undefined, source), `${issue.message}${keys}`);
    }
    const config = parsed.data as ChannelCommonConfig & Record<string, unknown>;
    // Two instances on one connection would take each other's messages (or answer for each other).
    for (const field of factory.distinctFields ?? []) {
      const twin = out.find((o) => o.factory === factory && o.config[field] !== undefined && o.config[field] === config[field]);
      if (twin) {
        throw new ChannelConfigError(
          channelField(key, field, source),
          `${String(config[field])} is also the ${field} of ${channelField(twin.name, undefined, source)}; each ${kind} instance needs its own (set ${field} on one of them)`,
        );
      }
    }
    out.push({ factory, name: key, config });
  }
  return out;
}
