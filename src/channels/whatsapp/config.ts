import { z } from 'zod';
import { channelCommonConfigSchema } from '../adapter.js';

/**
 * `channels.whatsapp`: the WhatsApp Cloud API (Meta). Secrets are named by environment variable:
 * the permanent/system-user access token, the app secret (signs inbound webhooks) and the verify
 * token Meta echoes when the webhook is registered.
 */
export const whatsappConfigSchema = channelCommonConfigSchema
  .extend({
    tokenEnv: z.string().min(1).default('WHATSAPP_TOKEN'),
    /** The sender's phone number id (WhatsApp Manager → API setup), not the phone number itself. */
    phoneNumberId: z.string().regex(/^\d+$/, 'the phone number id is digits (WhatsApp Manager → API setup)'),
    appSecretEnv: z.string().min(1).default('WHATSAPP_APP_SECRET'),
    verifyTokenEnv: z.string().min(1).default('WHATSAPP_VERIFY_TOKEN'),
    /** The Graph API base, version included; a loopback fake in tests. */
    graphApiRoot: z.string().url().default('https://graph.facebook.com/v21.0'),
    /** Where `sage serve` mounts the webhook (GET verification and POST deliveries). */
    webhookPath: z
      .string()
      .regex(/^\/channels\/[A-Za-z0-9/_-]+$/, 'the webhook path must start with /channels/')
      .default('/channels/whatsapp'),
  })
  .strict();

export type WhatsappConfig = z.infer<typeof whatsappConfigSchema>;
