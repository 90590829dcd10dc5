import { z } from 'zod';
import {
  CHANNEL_ADAPTER_VERSION,
  type AdapterContext,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  type ChannelRoute,
  type ConnectedInfo,
  type InboundResult,
  type InboundSink,
  type MessageEdit,
  type MessageRef,
  type OutboundMessage,
  channelField,
  channelRoutePath,
  seenIdsOf,
} from '../adapter.js';
import { ChannelUnavailableError } from '../errors.js';
import { withRetry, type AttemptResult } from '../retry.js';
import { readSecretEnv } from '../secrets.js';
import { systemChannelClock, type ChannelClock, type SeenIds } from '../seen-ids.js';
import { whatsappConfigSchema, type WhatsappConfig } from './config.js';
import { renderWhatsapp, WHATSAPP_MAX_BUTTONS, WHATSAPP_MAX_TEXT, WHATSAPP_MAX_TITLE, type WhatsappBody } from './render.js';
import { parseWhatsappMessages, safeEqual, verifyMetaSignature, whatsappWebhookSchema } from './webhook.js';

/**
 * WhatsApp Cloud API adapter, over fetch (Meta ships no maintained Node SDK). Inbound: the webhook
 * Meta calls (GET verification with `hub.verify_token`, POST deliveries signed with
 * `X-Hub-Signature-256`); outbound: the Graph API `/<phone-number-id>/messages`. WhatsApp cannot
 * edit a sent message, so `edit` sends a reply quoting it; a button left on an answered prompt is
 * harmless, since the core answers a late tap with "already answered".
 */

/** Graph API error codes that mean "slow down" (throughput, spam-rate and pair-rate limits). */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131048, 131056]);
/**
 * Meta redelivers a webhook it saw no 200 for, for up to 7 days: message ids are kept that long
 * (plus an hour), and a message sent longer ago than that is dropped by its own timestamp, which
 * Meta signs with the body; so a captured delivery is refused whenever it is posted again.
 */
const REDELIVERY_DAYS_MS = 7 * 24 * 3600_000;
const MESSAGE_ID_KEPT_MS = REDELIVERY_DAYS_MS + 3600_000;

const sendResponseSchema = z.object({ messages: z.array(z.object({ id: z.string().min(1) })).min(1) });
const graphErrorSchema = z.object({ error: z.object({ message: z.string().optional(), code: z.number().optional() }) });

export class WhatsappAdapter implements ChannelAdapter {
  readonly specificationVersion = CHANNEL_ADAPTER_VERSION;
  readonly name: string;
  readonly limits = { maxButtons: WHATSAPP_MAX_BUTTONS, maxButtonLabel: WHATSAPP_MAX_TITLE, maxText: WHATSAPP_MAX_TEXT };
  readonly routes: readonly ChannelRoute[];
  get outboundUrl(): string {
    return `${this.root}/${this.config.phoneNumberId}/messages`;
  }

  private readonly token: string;
  private readonly appSecret: string;
  private readonly verifyToken: string;
  private readonly root: string;
  private sink: InboundSink | undefined;
  /** Message ids taken (in the store under `sage serve`): a redelivery or replay is dropped, across restarts too. */
  private readonly seen: SeenIds;
  private readonly clock: ChannelClock;
  private inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly config: WhatsappConfig,
    private readonly ctx: AdapterContext,
    private readonly retry: { baseDelayMs?: number; sleep?: (ms: number) => Promise<void> } = {},
  ) {
    this.name = ctx.name ?? 'whatsapp';
    this.seen = seenIdsOf(ctx);
    this.clock = ctx.clock ?? systemChannelClock;
    this.token = readSecretEnv(ctx.env, config.tokenEnv, channelField(this.name, 'tokenEnv'));
    this.appSecret = readSecretEnv(ctx.env, config.appSecretEnv, channelField(this.name, 'appSecretEnv'));
    this.verifyToken = readSecretEnv(ctx.env, config.verifyTokenEnv, channelField(this.name, 'verifyTokenEnv'));
    this.root = config.graphApiRoot.replace(/\/+$/, '');
    this.routes = [
      { method: 'GET', path: config.webhookPath, handle: (request) => Promise.resolve(this.verifySubscription(request)) },
      { method: 'POST', path: config.webhookPath, handle: (request) => this.receive(request) },
    ];
  }

  async start(sink: InboundSink): Promise<ConnectedInfo> {
    // Checks the token and the phone number id before saying we are connected.
    let response: Response;
    try {
      response = await fetch(`${this.root}/${this.config.phoneNumberId}?fields=display_phone_number,verified_name`, {
        headers: { authorization: `Bearer ${this.token}` },
      });
    } catch (error) {
      throw new ChannelUnavailableError(this.name, `cannot reach the Graph API at ${this.root}`, { cause: error });
    }
    const body: unknown = await response.json().catch(() => undefined);
    if (!response.ok) {
      const message = graphErrorSchema.safeParse(body).data?.error.message ?? `HTTP ${response.status}`;
      throw new ChannelUnavailableError(this.name, `the Graph API refused phone number ${this.config.phoneNumberId}: ${message} (check ${this.config.tokenEnv} and phoneNumberId)`);
    }
    const info = z.object({ display_phone_number: z.string().optional(), verified_name: z.string().optional() }).safeParse(body).data;
    this.sink = sink;
    const who = [info?.display_phone_number, info?.verified_name ? `(${info.verified_name})` : undefined].filter(Boolean).join(' ');
    return { description: `${this.name}: ${who || this.config.phoneNumberId} via ${this.root}, webhook at ${this.config.webhookPath}` };
  }

  async stop(): Promise<void> {
    this.sink = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  async send(message: OutboundMessage): Promise<MessageRef> {
    const ids = await this.post(renderWhatsapp(message.chatId, message.text, message.approval));
    return { chatId: message.chatId, ...(message.threadId !== undefined ? { threadId: message.threadId } : {}), messageId: ids[ids.length - 1]! };
  }

  async edit(ref: MessageRef, edit: MessageEdit): Promise<void> {
    // No edit in the Cloud API: the new text goes out as a reply quoting the prompt.
    await this.post(renderWhatsapp(ref.chatId, edit.text, edit.approval, ref.messageId));
  }

  private async post(bodies: WhatsappBody[]): Promise<string[]> {
    const ids: string[] = [];
    for (const body of bodies) {
      ids.push(await withRetry({ channel: this.name, ...this.retry }, () => this.postOnce(body)));
    }
    return ids;
  }

  private async postOnce(body: WhatsappBody): Promise<AttemptResult<string>> {
    const response = await fetch(`${this.root}/${this.config.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const json: unknown = await response.json().catch(() => undefined);
    if (response.ok) {
      const parsed = sendResponseSchema.safeParse(json);
      if (parsed.success) return { ok: true, value: parsed.data.messages[0]!.id };
      return { ok: false, retry: false, status: response.status, message: 'the Graph API answered without a message id' };
    }
    const error = graphErrorSchema.safeParse(json).data?.error;
    const retryAfter = Number(response.headers.get('retry-after'));
    const limited = response.status === 429 || (error?.code !== undefined && RATE_LIMIT_CODES.has(error.code));
    return {
      ok: false,
      retry: limited || response.status >= 500,
      ...(Number.isFinite(retryAfter) && retryAfter > 0 ? { retryAfterMs: retryAfter * 1000 } : {}),
      status: response.status,
      message: `Graph API ${response.status}: ${error?.message ?? 'no error message'}`,
    };
  }

  /** Meta's subscription check: echo `hub.challenge` when the verify token matches. */
  private verifySubscription(request: Request): Response {
    const params = new URL(request.url).searchParams;
    const token = params.get('hub.verify_token') ?? '';
    if (params.get('hub.mode') !== 'subscribe' || !safeEqual(token, this.verifyToken)) {
      this.ctx.log.warn({ mode: params.get('hub.mode') }, 'whatsapp: webhook verification with a wrong verify token');
      return new Response('verify token mismatch', { status: 403 });
    }
    return new Response(params.get('hub.challenge') ?? '', { status: 200, headers: { 'content-type': 'text/plain' } });
  }

  private async receive(request: Request): Promise<Response> {
    const raw = Buffer.from(await request.arrayBuffer());
    if (!verifyMetaSignature(raw, request.headers.get('x-hub-signature-256'), this.appSecret)) {
      this.ctx.log.warn({}, 'whatsapp: webhook with a missing or wrong X-Hub-Signature-256, refused');
      return new Response('bad signature', { status: 401 });
    }
    let json: unknown;
    try {
      json = JSON.parse(raw.toString('utf8'));
    } catch {
      this.ctx.log.warn({}, 'whatsapp: signed webhook body is not JSON, dropped');
      return new Response('ok', { status: 200 });
    }
    const parsed = whatsappWebhookSchema.safeParse(json);
    // A signed but unexpected payload is acknowledged (so Meta does not redeliver it forever) and dropped.
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 3) }, 'whatsapp: webhook payload not understood, dropped');
      return new Response('ok', { status: 200 });
    }
    const sink = this.sink;
    if (sink === undefined) return new Response('not started', { status: 503 });
    // Handled before the 200, so a crash mid-way makes Meta redeliver the messages not yet taken
    // (one whose id was recorded when the process died is not taken again: replays weigh more).
    const work = this.deliverAll(sink, parseWhatsappMessages(parsed.data, this.config.phoneNumberId));
    this.inFlight.add(work);
    try {
      await work;
    } finally {
      this.inFlight.delete(work);
    }
    return new Response('ok', { status: 200 });
  }

  private async deliverAll(sink: InboundSink, messages: ReturnType<typeof parseWhatsappMessages>): Promise<void> {
    for (const message of messages) {
      const now = this.clock.now();
      if (message.sentAt !== undefined && now - message.sentAt * 1000 > REDELIVERY_DAYS_MS) {
        this.ctx.log.warn({ messageId: message.id, sentAt: message.sentAt }, `${this.name}: message sent longer ago than Meta redelivers, dropped`);
        continue;
      }
      if (!(await this.seen.firstSight(message.id, now + MESSAGE_ID_KEPT_MS))) {
        this.ctx.log.info({ messageId: message.id }, `${this.name}: message ${message.id} was already taken, dropped`);
        continue;
      }
      let result: InboundResult;
      try {
        result = await sink({
          channel: this.name,
          chatId: message.from,
          senderId: message.from,
          ...(message.name !== undefined ? { senderName: message.name } : {}),
          text: message.text,
          ...(message.fromButton ? { fromButton: true } : {}),
          ...(message.fromButton && message.contextId !== undefined ? { messageRef: { chatId: message.from, messageId: message.contextId } } : {}),
        });
      } catch (error) {
        // Not handled: forgotten, so Meta's redelivery (this request fails) is taken.
        await this.seen.forget(message.id).catch(() => {});
        throw error;
      }
      // No toast on WhatsApp: a tap's notice ("already approved by …") is a short reply.
      if (message.fromButton && result.notice) {
        await this.post(renderWhatsapp(message.from, result.notice, undefined, message.id)).catch((error: unknown) => {
          this.ctx.log.warn({ err: error }, 'whatsapp: could not send a notice');
        });
      }
    }
  }
}

export const whatsappAdapterFactory: ChannelAdapterFactory<typeof whatsappConfigSchema> = {
  kind: 'whatsapp',
  configSchema: whatsappConfigSchema,
  create: (config, ctx) => new WhatsappAdapter(config, ctx),
  // One phone number is one WhatsApp sender: two instances of it would answer each other's chats.
  distinctFields: ['phoneNumberId'],
  // A named instance gets its own inbound route, /channels/<kind>/<name>, unless webhookPath says otherwise.
  instanceDefaults: (channel) => ({ webhookPath: channelRoutePath(channel) }),
};
