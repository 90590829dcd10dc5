import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { CHANNEL_ADAPTER_VERSION, channelCommonConfigSchema, channelField, channelRoutePath, type AdapterContext, type ChannelAdapter, type ChannelAdapterFactory, type InboundSink, type MessageEdit, type MessageRef, type OutboundMessage } from '../adapter.js';
import { HttpPoster } from '../http-post.js';
import { readSecretEnv } from '../secrets.js';
import { withRetry, type AttemptResult } from '../retry.js';

/** The bare `webhook` channel's inbound route; a named instance `webhook:<name>` has `/channels/webhook/<name>`. */
export const WEBHOOK_PATH = '/channels/webhook';
export const SIGNATURE_HEADER = 'x-sage-signature';

export const webhookConfigSchema = channelCommonConfigSchema
  .extend({
    /** The environment variable holding the shared HMAC secret (both directions). */
    secretEnv: z.string().min(1),
    /** Where Sage POSTs its messages. */
    outboundUrl: z.string().url(),
  })
  .strict();
export type WebhookConfig = z.infer<typeof webhookConfigSchema>;

/** What a platform POSTs to /channels/webhook (or /channels/webhook/<name>); a button press is its text command plus the message that carried it. */
const inboundSchema = z.object({
  chatId: z.string().min(1).max(256),
  senderId: z.string().min(1).max(256),
  senderName: z.string().max(256).optional(),
  threadId: z.string().min(1).max(256).optional(),
  text: z.string().max(20_000),
  /** Set for a button press: the `messageId` of the Sage message whose button was pressed. */
  messageId: z.string().min(1).max(256).optional(),
});

/** `sha256=<hex HMAC-SHA256 of the raw body>`, as in the X-Sage-Signature header. */
export function signBody(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

function signatureMatches(secret: string, body: Uint8Array, header: string | null): boolean {
  if (!header) return false;
  const expected = Buffer.from(signBody(secret, body));
  const given = Buffer.from(header.trim());
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * The generic webhook: any platform can be wired with a small relay. Inbound `POST
 * /channels/webhook` (a named instance `webhook:ci`: `/channels/webhook/ci`) with `X-Sage-Signature`
 * made with that instance's own secret; outbound `POST outboundUrl` with
 * `{ messageId, chatId, threadId?, text, approval?: { id, options }, edit? }`, signed the same way.
 * An edit repeats the `messageId` with `"edit": true`.
 */
export function createWebhookAdapter(config: WebhookConfig, ctx: AdapterContext, options: { name?: string; retry?: { baseDelayMs?: number; attempts?: number } } = {}): ChannelAdapter {
  const name = options.name ?? ctx.name ?? 'webhook';
  const path = channelRoutePath(name);
  const secret = readSecretEnv(ctx.env, config.secretEnv, channelField(name, 'secretEnv'));
  let sink: InboundSink | undefined;
  let counter = 0;
  const prefix = `wh_${Date.now().toString(36)}_`;

  const poster = new HttpPoster(config.outboundUrl);

  const post = (payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json', 'x-sage-signature': signBody(secret, body) };
    return withRetry({ channel: name, ...options.retry }, async (): Promise<AttemptResult<void>> => {
      const { status, retryAfterMs } = await poster.post(body, headers);
      if (status >= 200 && status < 300) return { ok: true, value: undefined };
      return { ok: false, retry: status === 429 || status >= 500, status, message: `POST ${config.outboundUrl} answered ${status}`, ...(retryAfterMs ? { retryAfterMs } : {}) };
    });
  };

  const approvalOf = (message: OutboundMessage | MessageEdit) =>
    message.approval ? { approval: { id: message.approval.shortId, kind: message.approval.kind, options: message.approval.options.map((o) => ({ value: o.value, label: o.label, command: o.command })) } } : {};

  return {
    specificationVersion: CHANNEL_ADAPTER_VERSION,
    name,
    limits: {},
    routes: [
      {
        method: 'POST',
        path,
        async handle(request) {
          const raw = new Uint8Array(await request.arrayBuffer());
          // Unsigned or wrongly signed: 401 and nothing else happens (no parse, no sink call).
          if (!signatureMatches(secret, raw, request.headers.get(SIGNATURE_HEADER))) return json(401, { error: { code: 'bad_signature', message: 'X-Sage-Signature is missing or does not match the body.' } });
          if (!sink) return json(503, { error: { code: 'channel_stopped', message: `The ${name} channel is not running.` } });
          let body: z.infer<typeof inboundSchema>;
          try {
            body = inboundSchema.parse(JSON.parse(new TextDecoder().decode(raw)));
          } catch (error) {
            ctx.log.warn({ err: error }, `${name}: malformed body dropped`);
            return json(400, { error: { code: 'invalid_input', message: 'The body must be JSON { chatId, senderId, text } (strings).' } });
          }
          const result = await sink({
            channel: name,
            chatId: body.chatId,
            senderId: body.senderId,
            text: body.text,
            ...(body.senderName ? { senderName: body.senderName } : {}),
            ...(body.threadId ? { threadId: body.threadId } : {}),
            ...(body.messageId ? { fromButton: true, messageRef: { chatId: body.chatId, messageId: body.messageId, ...(body.threadId ? { threadId: body.threadId } : {}) } } : {}),
          });
          return json(200, result);
        },
      },
    ],
    async start(next) {
      sink = next;
      return { description: `inbound POST ${path}, outbound ${new URL(config.outboundUrl).origin}` };
    },
    async stop() {
      sink = undefined;
      poster.close();
    },
    async send(message) {
      const messageId = `${prefix}${++counter}`;
      await post({ messageId, chatId: message.chatId, ...(message.threadId ? { threadId: message.threadId } : {}), text: message.text, ...approvalOf(message) });
      return { chatId: message.chatId, ...(message.threadId ? { threadId: message.threadId } : {}), messageId };
    },
    async edit(ref: MessageRef, edit: MessageEdit) {
      await post({ messageId: ref.messageId, chatId: ref.chatId, ...(ref.threadId ? { threadId: ref.threadId } : {}), text: edit.text, edit: true, ...approvalOf(edit) });
    },
  };
}

export const webhookChannel: ChannelAdapterFactory<typeof webhookConfigSchema> = {
  kind: 'webhook',
  configSchema: webhookConfigSchema,
  create: (config, ctx) => createWebhookAdapter(config, ctx),
  // "Each with its own secret": a relay that holds one instance's secret must not be able to speak
  // as another (their approvers and chats differ).
  distinctFields: ['secretEnv'],
};
