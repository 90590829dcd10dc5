import { z } from 'zod';
import { channelCommonConfigSchema } from '../adapter.js';

/**
 * A Telegram user as the config names one: the numeric user id (stable, what the Bot API sends as
 * `from.id`) or `@username`. A username is easier to find but its owner can change it and someone
 * else can take it later, so ids are the safer choice for `approvers`.
 */
const telegramUserRef = z
  .string()
  .regex(/^(\d{1,20}|@[A-Za-z][A-Za-z0-9_]{3,31})$/, 'must be a Telegram user id (digits, e.g. "123456789") or an @username');

/**
 * `channels.telegram`: a bot made with @BotFather. Long polling (`getUpdates`) by default, so no
 * public URL is needed; `mode: "webhook"` has Telegram post updates to `webhookUrl` instead.
 */
export const telegramConfigSchema = channelCommonConfigSchema
  .extend({
    approvers: z.array(telegramUserRef).default([]),
    allowFrom: z.array(telegramUserRef).optional(),
    /** The environment variable holding the bot token from @BotFather (`123456:ABC…`). */
    tokenEnv: z.string().min(1).default('TELEGRAM_BOT_TOKEN'),
    /** The Bot API server (a loopback fake in tests, or a self-hosted telegram-bot-api). */
    apiRoot: z
      .string()
      .url()
      .default('https://api.telegram.org')
      // grammY refuses a trailing slash (it joins `/bot<token>/<method>` itself).
      .transform((url) => url.replace(/\/+$/, '')),
    mode: z.enum(['polling', 'webhook']).default('polling'),
    /** Seconds one getUpdates call waits for news before it is asked again (Telegram allows up to 50). */
    pollTimeoutSeconds: z.number().int().min(0).max(50).default(30),
    /** Webhook mode: the public HTTPS URL Telegram posts to; it must reach `webhookPath` on this server. */
    webhookUrl: z.string().url().optional(),
    /** Webhook mode: the path mounted on `sage serve`. */
    webhookPath: z
      .string()
      .regex(/^\/channels\/[A-Za-z0-9/_-]+$/, 'must be a path under /channels/')
      .default('/channels/telegram'),
    /** Webhook mode: the variable holding the secret Telegram sends back in X-Telegram-Bot-Api-Secret-Token. */
    webhookSecretEnv: z.string().min(1).default('TELEGRAM_WEBHOOK_SECRET'),
  })
  .strict()
  .superRefine((config, ctx) => {
    if (config.mode === 'webhook' && config.webhookUrl === undefined) {
      ctx.addIssue({ code: 'custom', path: ['webhookUrl'], message: 'is required in webhook mode (the public URL Telegram posts updates to)' });
    }
  });

export type TelegramConfig = z.infer<typeof telegramConfigSchema>;
