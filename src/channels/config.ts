import { z } from 'zod';
import type { ChannelAdapterFactory, ChannelCommonConfig } from './adapter.js';
import { ChannelConfigError } from './errors.js';

export interface ParsedChannel {
  factory: ChannelAdapterFactory;
  config: ChannelCommonConfig & Record<string, unknown>;
}

/**
 * Validates the `channels` object (settings key or `--channels FILE`) against each adapter's own
 * schema. The first problem stops the start and names its field (`channels.telegram.tokenEnv`).
 */
export function parseChannelsConfig(raw: unknown, factories: readonly ChannelAdapterFactory[], source = 'channels'): ParsedChannel[] {
  if (raw === undefined || raw === null) return [];
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ChannelConfigError(source, 'must be an object keyed by channel kind (telegram, webhook, …)');
  const out: ParsedChannel[] = [];
  for (const [kind, value] of Object.entries(raw as Record<string, unknown>)) {
    const factory = factories.find((f) => f.kind === kind);
    if (!factory) throw new ChannelConfigError(`${source}.${kind}`, `unknown channel kind; this build has ${factories.map((f) => f.kind).join(', ')}`);
    const parsed = (factory.configSchema as z.ZodType).safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      const path = issue.path.length ? `.${issue.path.join('.')}` : '';
      const keys = issue.code === 'unrecognized_keys' ? ` (${(issue as { keys: string[] }).keys.join(', ')})` : '';
      throw new ChannelConfigError(`${source}.${kind}${path}`, `${issue.message}${keys}`);
    }
    out.push({ factory, config: parsed.data as ChannelCommonConfig & Record<string, unknown> });
  }
  return out;
}
