import type { ChannelEndpoints } from '../channels/start-channels.js';

/**
 * The channel lines of `sage serve`'s start banner: what each adapter connected to, then the whole
 * URL a platform or relay posts to (this server's address and the route) and the one it sends to.
 */
export function channelBannerLines(
  serverUrl: string,
  connected: readonly string[],
  endpoints: readonly ChannelEndpoints[],
): string[] {
  const base = serverUrl.replace(/\/+$/, '');
  const lines: string[] = [];
  for (const endpoint of endpoints) {
    const line = connected.find((l) => l.startsWith(`${endpoint.channel}: `));
    lines.push(`channel ${line ?? endpoint.channel}`);
    for (const route of endpoint.inbound) lines.push(`  inbound  ${route.method} ${base}${route.path}`);
    if (endpoint.outbound) lines.push(`  outbound ${shownUrl(endpoint.outbound)}`);
  }
  return lines;
}

/** A URL without what may be a credential in it: the user and password, and the query's values. */
export function shownUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (parsed.username || parsed.password) {
    parsed.username = '***';
    parsed.password = '';
  }
  for (const key of [...new Set(parsed.searchParams.keys())]) parsed.searchParams.set(key, '***');
  return parsed.toString().replace(/%2A%2A%2A/g, '***');
}
