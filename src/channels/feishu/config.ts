import { z } from 'zod';
import { channelCommonConfigSchema } from '../adapter.js';

/**
 * `channels.feishu`: a Feishu (China) or Lark (international) self-built app with the bot
 * capability. `mode: "websocket"` (default) receives events over the SDK's long connection, no
 * public URL needed; `mode: "webhook"` mounts an HTTP event endpoint checked with the verification
 * token and, when set, the encrypt key.
 */
export const feishuConfigSchema = channelCommonConfigSchema
  .extend({
    appIdEnv: z.string().min(1).default('FEISHU_APP_ID'),
    appSecretEnv: z.string().min(1).default('FEISHU_APP_SECRET'),
    /** `https://open.feishu.cn` (Feishu), `https://open.larksuite.com` (Lark), or a loopback fake in tests. */
    domain: z
      .string()
      .url()
      .default('https://open.feishu.cn')
      .transform((url) => url.replace(/\/+$/, '')),
    mode: z.enum(['websocket', 'webhook']).default('websocket'),
    /** Webhook mode: the "Verification Token" of Events and Callbacks → Encryption strategy. */
    verificationTokenEnv: z.string().min(1).optional(),
    /** Webhook mode, optional: the "Encrypt Key"; then every delivery is encrypted and signed. */
    encryptKeyEnv: z.string().min(1).optional(),
    /** Webhook mode: where `sage serve` mounts the event (and card callback) endpoint. */
    webhookPath: z
      .string()
      .regex(/^\/channels\/[A-Za-z0-9/_-]+$/, 'the webhook path must start with /channels/')
      .default('/channels/feishu'),
  })
  .strict()
  .superRefine((config, ctx) => {
    // An endpoint nobody can authenticate would accept forged approvals: the token is required.
    if (config.mode === 'webhook' && config.verificationTokenEnv === undefined) {
      ctx.addIssue({ code: 'custom', path: ['verificationTokenEnv'], message: 'webhook mode needs verificationTokenEnv (the app\'s Verification Token) so forged events are refused' });
    }
  });

export type FeishuConfig = z.infer<typeof feishuConfigSchema>;
