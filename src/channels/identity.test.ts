import { describe, expect, it } from 'vitest';
import { serverUserIdSchema } from '../runtime/principal.js';
import { parseChannelsConfig } from './config.js';
import { ChannelConfigError } from './errors.js';
import { chatIdentity, chatPrincipal, senderOfPrincipal } from './identity.js';
import { webhookChannel } from './webhook/webhook-adapter.js';

describe('a chat sender\'s principal is <channel>:<senderId>', () => {
  it('names the channel id, the bare kind or a named instance', () => {
    expect(chatPrincipal('telegram', '42')).toBe('telegram:42');
    expect(chatPrincipal('webhook', 'alice')).toBe('webhook:alice');
    expect(chatPrincipal('webhook:ci', 'alice')).toBe('webhook:ci:alice');
  });

  it('a sender id with ":" or "%" cannot pose as another instance\'s sender', () => {
    // The bare webhook's sender "ci:alice" is not webhook:ci's sender "alice".
    expect(chatPrincipal('webhook', 'ci:alice')).toBe('webhook:ci%3Aalice');
    expect(chatPrincipal('webhook', 'ci:alice')).not.toBe(chatPrincipal('webhook:ci', 'alice'));
    // Nor can an encoded-looking id pose as the one it encodes.
    expect(chatPrincipal('webhook', 'ci%3Aalice')).toBe('webhook:ci%253Aalice');
    expect(chatPrincipal('webhook', 'ci%3Aalice')).not.toBe(chatPrincipal('webhook', 'ci:alice'));
    expect(senderOfPrincipal(chatPrincipal('webhook', 'ci%3Aa:b'), 'webhook')).toBe('ci%3Aa:b');
    expect(senderOfPrincipal('webhook:ci:alice', 'webhook')).toBeUndefined();
    expect(senderOfPrincipal('webhook:ci:alice', 'webhook:ci')).toBe('alice');
  });

  it('is never a server user id (those have no ":")', () => {
    for (const principal of [chatPrincipal('webhook', 'alice'), chatPrincipal('telegram', '42'), chatPrincipal('webhook:ci', 'mallory')]) {
      expect(serverUserIdSchema.safeParse(principal).success).toBe(false);
    }
  });

  it('a mapped sender is the server user; everyone else, and prototype names, stay principals', () => {
    const users = { alice: 'alice', '42': 'bob' };
    expect(chatIdentity('webhook', 'alice', users)).toBe('alice');
    expect(chatIdentity('telegram', '42', users)).toBe('bob');
    expect(chatIdentity('webhook', 'mallory', users)).toBe('webhook:mallory');
    expect(chatIdentity('webhook', 'mallory', undefined)).toBe('webhook:mallory');
    for (const name of ['constructor', 'toString', '__proto__', 'hasOwnProperty']) expect(chatIdentity('webhook', name, users)).toBe(`webhook:${name}`);
  });
});

describe('channels.<name>.users', () => {
  const base = { secretEnv: 'S', outboundUrl: 'http://127.0.0.1:9/hook' };

  it('maps sender ids to server users', () => {
    const [parsed] = parseChannelsConfig({ 'webhook:ci': { ...base, users: { alice: 'alice', 'U0BOB': 'bob@example.com' } } }, [webhookChannel]);
    expect(parsed!.config.users).toEqual({ alice: 'alice', U0BOB: 'bob@example.com' });
  });

  it.each([
    [{ alice: 'webhook:alice' }, 'channels.webhook.users.alice: a user id is 1-64 letters'],
    [{ alice: 'telegram:42' }, 'no ":"'],
    [{ alice: '' }, 'channels.webhook.users.alice'],
    [{ alice: 'a b' }, 'channels.webhook.users.alice'],
    [{ '': 'alice' }, 'channels.webhook.users'],
  ])('refuses %j, naming the field', (users, message) => {
    expect(() => parseChannelsConfig({ webhook: { ...base, users } }, [webhookChannel])).toThrow(ChannelConfigError);
    expect(() => parseChannelsConfig({ webhook: { ...base, users } }, [webhookChannel])).toThrow(message);
  });
});
