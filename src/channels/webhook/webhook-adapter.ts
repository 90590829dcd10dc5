import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { CHANNEL_ADAPTER_VERSION, channelCommonConfigSchema, channelField, channelRoutePath, seenIdsOf, type AdapterContext, type ChannelAdapter, type ChannelAdapterFactory, type InboundSink, type MessageEdit, type MessageRef, type OutboundMessage } from '../adapter.js';
import { HttpPoster } from '../http-post.js';
import { readSecretEnv } from '../secrets.js';
import { withRetry, type AttemptResult } from '../retry.js';
import { systemChannelClock } from '../seen-ids.js';
import { SIGNATURE_HEADER, SIGNATURE_WINDOW_SECONDS, TIMESTAMP_HEADER, verifyWebhookSignature, webhookSignatureHeaders } from './signature.js';

/** The bare `webhook` channel's inbound route; a named instance `webhook:<name>` has `/channels/webhook/<name>`. */
export const WEBHOOK_PATH = '/channels/webhook';
export { SIGNATURE_HEADER, SIGNATURE_WINDOW_SECONDS, signWebhook, TIMESTAMP_HEADER, verifyWebhookSignature, webhookSignatureHeaders } from './signature.js';

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
  /**
   * The relay's id of this delivery (its platform's message id, or a random one). Not read: it makes
   * two identical messages signed in the same second two signatures, not a replay of one.
   */
  deliveryId: z.string().min(1).max(256).optional(),
});

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
}

/**
 * The generic webhook: any platform can be wired with a small relay. Inbound `POST
 * /channels/webhook` (a named instance `webhook:ci`: `/channels/webhook/ci`) with `X-Sage-Timestamp`
 * and `X-Sage-Signature` (signature.ts) made with that instance's own secret; outbound `POST
 * outboundUrl` with `{ deliveryId, messageId, chatId, threadId?, text, approval?: { id, kind, options,
 * context? }, edit? }` (`context`: the ask's task, folder, asker, risk and mode), signed the same way. An edit repeats the `messageId` with `"edit": true`.
 *
 * A request signed more than 300 s from the server's clock is refused (401), and so is a signature
 * already taken within that window (409): the signature is recorded (in the store under `sage
 * serve`) before the message reaches the core, so a captured request approves nothing when posted
 * again, after a restart or on another server over the same database.
 */
export function createWebhookAdapter(config: WebhookConfig, ctx: AdapterContext, options: { name?: string; retry?: { baseDelayMs?: number; attempts?: number } } = {}): ChannelAdapter {
  const name = options.name ?? ctx.name ?? 'webhook';
  const path = channelRoutePath(name);
  const secret = readSecretEnv(ctx.env, config.secretEnv, channelField(name, 'secretEnv'));
  const clock = ctx.clock ?? systemChannelClock;
  const seenIds = seenIdsOf(ctx);
  let sink: InboundSink | undefined;
  let counter = 0;
  const prefix = `wh_${Date.now().toString(36)}_`;

  const poster = new HttpPoster(config.outboundUrl);

  const post = (payload: Record<string, unknown>) => {
    // Its own id per post (kept across its retries): two identical edits are two signatures, so a
    // relay refusing signatures it took does not take the second for a replay.
    const body = JSON.stringify({ deliveryId: randomUUID(), ...payload });
    return withRetry({ channel: name, ...options.retry }, async (): Promise<AttemptResult<void>> => {
      // Signed at each attempt: a retry after a backoff must not look like a replay, nor grow stale.
      const { status, retryAfterMs } = await poster.post(body, { 'content-type': 'application/json', ...webhookSignatureHeaders(secret, body, clock.now()) });
      if (status >= 200 && status < 300) return { ok: true, value: undefined };
      return { ok: false, retry: status === 429 || status >= 500, status, message: `POST ${config.outboundUrl} answered ${status}`, ...(retryAfterMs ? { retryAfterMs } : {}) };
    });
  };

  const approvalOf = (message: OutboundMessage | MessageEdit) =>
    message.approval
      ? {
          approval: {
            id: message.approval.shortId,
            kind: message.approval.kind,
            options: message.approval.options.map((o) => ({ value: o.value, label: o.label, command: o.command })),
            ...(message.approval.context ? { context: message.approval.context } : {}),
          },
        }
      : {};

  return {
    specificationVersion: CHANNEL_ADAPTER_VERSION,
    name,
    limits: {},
    outboundUrl: config.outboundUrl,
    routes: [
      {
        method: 'POST',
        path,
        async handle(request) {
          const raw = new Uint8Array(await request.arrayBuffer());
          // Unsigned, wrongly signed or signed too long ago: 401 and nothing else happens (no parse, no sink call).
          const check = verifyWebhookSignature(secret, { timestamp: request.headers.get(TIMESTAMP_HEADER), signature: request.headers.get(SIGNATURE_HEADER) }, raw, clock.now());
          if (!check.ok) return json(401, { error: { code: check.code, message: check.message } });
          // Before the signature is recorded: the relay may send the same request again once we run.
          if (!sink) return json(503, { error: { code: 'channel_stopped', message: `The ${name} channel is not running.` } });
          // Kept until the timestamp leaves the window; after that the time check refuses it anyway.
          if (!(await seenIds.firstSight(`sig:${check.digest}`, (check.timestamp + SIGNATURE_WINDOW_SECONDS + 1) * 1000))) {
            ctx.log.warn({ timestamp: check.timestamp }, `${name}: a signed request already taken was posted again, refused`);
            return json(409, { error: { code: 'replayed', message: 'This signed request was already received: sign every request anew (a new X-Sage-Timestamp), and never post a signed request twice.' } });
          }
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
