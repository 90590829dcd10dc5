import { z } from 'zod';
import { serverUserIdSchema } from '../runtime/principal.js';

/**
 * `channels.<name>.users`: chat senders who are server users, `{ "<senderId>": "<server user>" }`.
 * Only the operator says that a chat sender is a web user: a platform id that merely equals a
 * server user's name is someone else (anyone can pick a display name or a webhook sender id).
 */
export const channelUsersSchema = z.record(z.string().min(1).max(256), serverUserIdSchema);
export type ChannelUsers = z.infer<typeof channelUsersSchema>;

/**
 * The principal of a chat sender who is not mapped: `<channel>:<senderId>` (`telegram:42`,
 * `webhook:alice`, and for a named instance `webhook:ci:alice`). `%` and `:` in the sender id are
 * percent-encoded, so the last ":" always ends the channel id: the bare `webhook`'s sender `ci:alice`
 * (`webhook:ci%3Aalice`) is not `webhook:ci`'s sender `alice`. A server user id has no ":", so no
 * principal is ever a server user's name.
 */
export function chatPrincipal(channel: string, senderId: string): string {
  return `${channel}:${senderId.replace(/[%:]/g, (c) => (c === '%' ? '%25' : '%3A'))}`;
}

/** Who `senderId` of `channel` is: the server user the operator mapped them to, else their principal. */
export function chatIdentity(channel: string, senderId: string, users: ChannelUsers | undefined): string {
  // Own keys only: a sender id like "constructor" or "toString" must not reach Object.prototype.
  if (users && Object.hasOwn(users, senderId)) return users[senderId]!;
  return chatPrincipal(channel, senderId);
}

/** The sender id inside `principal` when it is one of `channel`'s (for "approved by 42"); else undefined. */
export function senderOfPrincipal(principal: string, channel: string): string | undefined {
  const prefix = `${channel}:`;
  if (!principal.startsWith(prefix)) return undefined;
  const rest = principal.slice(prefix.length);
  if (rest.includes(':')) return undefined;
  try {
    return decodeURIComponent(rest);
  } catch {
    return undefined;
  }
}
