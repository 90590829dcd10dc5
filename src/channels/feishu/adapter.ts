import * as lark from '@larksuiteoapi/node-sdk';
import { z } from 'zod';
import {
  CHANNEL_ADAPTER_VERSION,
  type AdapterContext,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  type ChannelLogger,
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
import { feishuConfigSchema, type FeishuConfig } from './config.js';
import { decryptFeishu, feishuSignature, safeEqual } from './crypto.js';
import { cardActionSchema, flattenEnvelope, messageReceiveSchema, textOf } from './events.js';
import { FEISHU_MAX_BUTTON_LABEL, FEISHU_MAX_BUTTONS, FEISHU_MAX_TEXT, renderFeishuCard } from './render.js';

/**
 * Feishu/Lark adapter with the vendor's SDK. Inbound over the long connection (`WSClient`, the
 * default) or an HTTP event endpoint; outbound through the Open API (cards with buttons, PATCH to
 * update them). Feishu wants an answer within 3 s and redelivers otherwise, so a delivery is
 * answered after at most ~2.5 s even if the core is still busy, and redeliveries are dropped by id.
 */

const CALLBACK_BUDGET_MS = 2500;
const WS_CONNECT_BUDGET_MS = 10_000;
/**
 * How long an event id is remembered: Feishu retries an event it got no answer for at 15 s, 5 min,
 * 1 h and 6 h; a day covers that, for a restart in between.
 */
const EVENT_ID_KEPT_MS = 24 * 3600_000;
/** How far X-Lark-Request-Timestamp may be from the server's clock, either way (a signed delivery). */
const SIGNATURE_WINDOW_SECONDS = 300;
/** Open API codes that mean "slow down" or "try again" (frequency limit, internal error). */
const RETRYABLE_CODES = new Set([99991400, 99991401, 1000004, 1000005, 230020]);

const apiResponseSchema = z.object({ code: z.number(), msg: z.string().optional(), data: z.unknown().optional() });

/**
 * A token cache per adapter. The SDK's default cache is one per process keyed by app id, so two
 * adapters for the same app on different domains (a restart against another fake, Feishu and Lark)
 * would share a token one of them never issued.
 */
function tokenCache(): lark.Cache {
  const values = new Map<string, { value: unknown; expiredTime?: number }>();
  const keyOf = (key: string | symbol, namespace?: string) => `${namespace ?? ''}/${key.toString()}`;
  return {
    get: (key, options) => {
      const entry = values.get(keyOf(key as string | symbol, options?.namespace));
      return Promise.resolve(entry && (!entry.expiredTime || entry.expiredTime > Date.now()) ? entry.value : undefined);
    },
    set: (key, value, expiredTime, options) => {
      values.set(keyOf(key as string | symbol, options?.namespace), { value, ...(expiredTime !== undefined ? { expiredTime } : {}) });
      return Promise.resolve(true);
    },
  };
}

function larkLogger(log: ChannelLogger): lark.Logger {
  const line = (msg: unknown[]) => ({ lark: msg.map((m) => (typeof m === 'string' ? m : JSON.stringify(m))).join(' ') });
  return {
    error: (...msg: unknown[]) => log.error(line(msg)),
    warn: (...msg: unknown[]) => log.warn(line(msg)),
    info: (...msg: unknown[]) => log.info(line(msg)),
    debug: (...msg: unknown[]) => log.debug(line(msg)),
    trace: () => {},
  };
}

/** Maps a failed Open API call (an axios error, or a 200 with a non-zero code) to the retry verdict. */
function classify(error: unknown): AttemptResult<never> {
  const e = error as { response?: { status?: number; data?: unknown; headers?: Record<string, string> }; message?: string };
  if (e.response === undefined) return { ok: false, retry: true, message: e.message ?? String(error) };
  const status = e.response.status ?? 0;
  const body = apiResponseSchema.safeParse(e.response.data).data;
  const reset = Number(e.response.headers?.['x-ogw-ratelimit-reset']);
  const limited = status === 429 || (body !== undefined && RETRYABLE_CODES.has(body.code));
  return {
    ok: false,
    retry: limited || status >= 500,
    status,
    ...(limited && Number.isFinite(reset) && reset > 0 ? { retryAfterMs: reset * 1000 } : {}),
    message: `Open API ${status}: ${body ? `${body.code} ${body.msg ?? ''}`.trim() : (e.message ?? 'no message')}`,
  };
}

export class FeishuAdapter implements ChannelAdapter {
  readonly specificationVersion = CHANNEL_ADAPTER_VERSION;
  readonly name: string;
  readonly limits = { maxButtons: FEISHU_MAX_BUTTONS, maxButtonLabel: FEISHU_MAX_BUTTON_LABEL, maxText: FEISHU_MAX_TEXT };
  readonly routes: readonly ChannelRoute[];
  get outboundUrl(): string {
    return this.config.domain;
  }

  private readonly appId: string;
  private readonly appSecret: string;
  private readonly verificationToken: string | undefined;
  private readonly encryptKey: string | undefined;
  private readonly client: lark.Client;
  private ws: lark.WSClient | undefined;
  private sink: InboundSink | undefined;
  /** Event ids and signatures taken (in the store under `sage serve`): redeliveries and replays are dropped, across restarts too. */
  private readonly seen: SeenIds;
  private readonly clock: ChannelClock;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(
    private readonly config: FeishuConfig,
    private readonly ctx: AdapterContext,
    private readonly retry: { baseDelayMs?: number; sleep?: (ms: number) => Promise<void> } = {},
  ) {
    this.name = ctx.name ?? 'feishu';
    this.seen = seenIdsOf(ctx);
    this.clock = ctx.clock ?? systemChannelClock;
    this.appId = readSecretEnv(ctx.env, config.appIdEnv, channelField(this.name, 'appIdEnv'));
    this.appSecret = readSecretEnv(ctx.env, config.appSecretEnv, channelField(this.name, 'appSecretEnv'));
    this.verificationToken = config.verificationTokenEnv ? readSecretEnv(ctx.env, config.verificationTokenEnv, channelField(this.name, 'verificationTokenEnv')) : undefined;
    this.encryptKey = config.encryptKeyEnv ? readSecretEnv(ctx.env, config.encryptKeyEnv, channelField(this.name, 'encryptKeyEnv')) : undefined;
    this.client = new lark.Client({ appId: this.appId, appSecret: this.appSecret, domain: config.domain, cache: tokenCache(), logger: larkLogger(ctx.log), loggerLevel: lark.LoggerLevel.warn });
    this.routes = config.mode === 'webhook' ? [{ method: 'POST', path: config.webhookPath, handle: (request) => this.receive(request) }] : [];
  }

  async start(sink: InboundSink): Promise<ConnectedInfo> {
    const botName = await this.checkCredentials();
    this.sink = sink;
    if (this.config.mode === 'webhook') {
      return { description: `${this.name}: ${botName} via ${this.config.domain}, events at ${this.config.webhookPath}` };
    }
    const dispatcher = new lark.EventDispatcher({ logger: larkLogger(this.ctx.log), loggerLevel: lark.LoggerLevel.warn }).register({
      'im.message.receive_v1': async (data: unknown) => {
        await this.dispatch('im.message.receive_v1', data as Record<string, unknown>);
      },
      'card.action.trigger': async (data: unknown) => this.dispatch('card.action.trigger', data as Record<string, unknown>),
    } as Record<string, (data: unknown) => Promise<unknown>>);
    await this.checkLongConnection();
    this.ws = new lark.WSClient({ appId: this.appId, appSecret: this.appSecret, domain: this.config.domain, logger: larkLogger(this.ctx.log), loggerLevel: lark.LoggerLevel.warn });
    await this.ws.start({ eventDispatcher: dispatcher });
    await this.waitConnected(this.ws);
    return { description: `${this.name}: ${botName} via ${this.config.domain} (long connection)` };
  }

  /**
   * Asks for a long-connection endpoint once before handing over to the SDK: its WSClient retries
   * a refusal forever (logging), so an app not set to "receive events through persistent
   * connection" would start and never hear anything. Here it stops the start with the reason.
   */
  private async checkLongConnection(): Promise<void> {
    let body: unknown;
    try {
      const response = await fetch(`${this.config.domain}/callback/ws/endpoint`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', locale: 'en' },
        body: JSON.stringify({ AppID: this.appId, AppSecret: this.appSecret }),
      });
      body = await response.json().catch(() => undefined);
    } catch (error) {
      throw new ChannelUnavailableError(this.name, `cannot reach the long-connection endpoint at ${this.config.domain}`, { cause: error });
    }
    const answer = apiResponseSchema.safeParse(body).data;
    if (answer?.code !== 0) {
      throw new ChannelUnavailableError(
        this.name,
        `the long connection was refused: ${answer?.msg ?? 'no answer'} (set Events and Callbacks → "receive events through persistent connection" for the app, or use mode "webhook")`,
      );
    }
  }

  /**
   * The SDK's start() returns before the socket is up; wait for it, so a refused long connection
   * (an app not set to "receive events through persistent connection") stops the start.
   */
  private async waitConnected(ws: lark.WSClient): Promise<void> {
    const deadline = Date.now() + WS_CONNECT_BUDGET_MS;
    for (;;) {
      const state = ws.getConnectionStatus().state;
      if (state === 'connected') return;
      if (state === 'failed' || state === 'idle') {
        ws.close({ force: true });
        this.ws = undefined;
        throw new ChannelUnavailableError(this.name, `the long connection to ${this.config.domain} was refused (enable "receive events through persistent connection" for the app, or use mode "webhook")`);
      }
      if (Date.now() > deadline) {
        // Still retrying: the SDK keeps at it; sending works meanwhile, receiving starts when it connects.
        this.ctx.log.warn({ state }, 'feishu: the long connection is not up yet; the SDK keeps retrying');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async stop(): Promise<void> {
    this.sink = undefined;
    this.ws?.close({ force: true });
    this.ws = undefined;
    await Promise.allSettled([...this.inFlight]);
  }

  /** Fetches a tenant token (the app id and secret) and the bot's name, so a bad config stops the start. */
  private async checkCredentials(): Promise<string> {
    let body: unknown;
    try {
      const response = await fetch(`${this.config.domain}/open-apis/auth/v3/tenant_access_token/internal`, {
        method: 'POST',
        headers: { 'content-type': 'application/json; charset=utf-8' },
        body: JSON.stringify({ app_id: this.appId, app_secret: this.appSecret }),
      });
      body = await response.json().catch(() => undefined);
    } catch (error) {
      throw new ChannelUnavailableError(this.name, `cannot reach ${this.config.domain}`, { cause: error });
    }
    const token = apiResponseSchema.safeParse(body).data;
    if (token?.code !== 0) {
      throw new ChannelUnavailableError(this.name, `${this.config.domain} refused the app credentials: ${token?.msg ?? 'no answer'} (check ${this.config.appIdEnv} and ${this.config.appSecretEnv})`);
    }
    try {
      const info = z.object({ code: z.literal(0), bot: z.object({ app_name: z.string().optional(), open_id: z.string().optional() }) }).parse(
        await this.client.request({ method: 'GET', url: '/open-apis/bot/v3/info' }),
      );
      return info.bot.app_name ?? info.bot.open_id ?? this.appId;
    } catch (error) {
      throw new ChannelUnavailableError(this.name, `the app has no bot (enable the Bot capability): ${(error as Error).message}`, { cause: error });
    }
  }

  async send(message: OutboundMessage): Promise<MessageRef> {
    const content = JSON.stringify(renderFeishuCard(message.text, message.approval));
    // In a thread (topic), reply to its root message so the answer stays in the thread.
    const request =
      message.threadId !== undefined
        ? { method: 'POST', url: `/open-apis/im/v1/messages/${encodeURIComponent(message.threadId)}/reply`, data: { msg_type: 'interactive', content, reply_in_thread: true } }
        : { method: 'POST', url: '/open-apis/im/v1/messages', params: { receive_id_type: 'chat_id' }, data: { receive_id: message.chatId, msg_type: 'interactive', content } };
    const data = await this.call(request);
    const id = z.object({ message_id: z.string().min(1) }).safeParse(data);
    if (!id.success) throw new ChannelUnavailableError(this.name, 'the Open API answered a send without a message_id');
    return { chatId: message.chatId, ...(message.threadId !== undefined ? { threadId: message.threadId } : {}), messageId: id.data.message_id };
  }

  async edit(ref: MessageRef, edit: MessageEdit): Promise<void> {
    await this.call({ method: 'PATCH', url: `/open-apis/im/v1/messages/${encodeURIComponent(ref.messageId)}`, data: { content: JSON.stringify(renderFeishuCard(edit.text, edit.approval)) } });
  }

  private call(request: Record<string, unknown>): Promise<unknown> {
    return withRetry({ channel: this.name, ...this.retry }, async () => {
      try {
        const body = apiResponseSchema.safeParse(await this.client.request(request));
        if (!body.success) return { ok: false, retry: false, message: 'the Open API answered with an unexpected body' };
        if (body.data.code !== 0) return { ok: false, retry: RETRYABLE_CODES.has(body.data.code), message: `Open API: ${body.data.code} ${body.data.msg ?? ''}`.trim() };
        return { ok: true, value: body.data.data };
      } catch (error) {
        return classify(error);
      }
    });
  }

  /** The HTTP event endpoint: decrypt, check signature and token, answer url_verification, dispatch. */
  private async receive(request: Request): Promise<Response> {
    const raw = await request.text();
    const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
    let body: Record<string, unknown>;
    try {
      body = z.record(z.string(), z.unknown()).parse(JSON.parse(raw));
      if (this.encryptKey !== undefined) {
        // With an Encrypt Key set, Feishu never sends plaintext: a plaintext body is forged.
        if (typeof body.encrypt !== 'string') return json({ error: 'expected an encrypted body' }, 401);
        body = z.record(z.string(), z.unknown()).parse(JSON.parse(decryptFeishu(body.encrypt, this.encryptKey)));
      }
    } catch {
      this.ctx.log.warn({}, 'feishu: event body not JSON or not decryptable, refused');
      return json({ error: 'bad body' }, 400);
    }
    const envelope = flattenEnvelope(body);
    if (this.verificationToken === undefined || envelope.token === undefined || !safeEqual(envelope.token, this.verificationToken)) {
      this.ctx.log.warn({ type: envelope.type }, 'feishu: event with a wrong verification token, refused');
      return json({ error: 'bad token' }, 401);
    }
    if (envelope.type === 'url_verification') return json({ challenge: body.challenge });
    if (this.encryptKey !== undefined) {
      const timestamp = request.headers.get('x-lark-request-timestamp') ?? '';
      const nonce = request.headers.get('x-lark-request-nonce') ?? '';
      const signature = request.headers.get('x-lark-signature') ?? '';
      if (!safeEqual(signature, feishuSignature(timestamp, nonce, this.encryptKey, raw))) {
        this.ctx.log.warn({ type: envelope.type }, 'feishu: event with a wrong X-Lark-Signature, refused');
        return json({ error: 'bad signature' }, 401);
      }
      // The timestamp is signed: a captured delivery cannot be made fresh, so an old one is refused.
      const offset = /^\d{1,12}$/.test(timestamp) ? Math.abs(Math.floor(this.clock.now() / 1000) - Number(timestamp)) : Infinity;
      if (offset > SIGNATURE_WINDOW_SECONDS) {
        this.ctx.log.warn({ type: envelope.type, offset }, 'feishu: signed event outside the time window, refused');
        return json({ error: `X-Lark-Request-Timestamp is ${Number.isFinite(offset) ? `${offset} s` : 'not a time'} from the server's clock (at most ${SIGNATURE_WINDOW_SECONDS} s)` }, 401);
      }
      if (this.sink === undefined) return json({ error: 'not started' }, 503);
      // Within the window, the same signed request twice is a replay (a card callback may carry no event id).
      if (!(await this.seen.firstSight(`sig:${signature}`, (Number(timestamp) + SIGNATURE_WINDOW_SECONDS + 1) * 1000))) {
        this.ctx.log.warn({ type: envelope.type }, 'feishu: a signed request already taken was posted again, dropped');
        return json({});
      }
    }
    if (this.sink === undefined) return json({ error: 'not started' }, 503);
    const answer = await this.dispatch(envelope.type ?? '', envelope.data);
    return json(answer ?? {});
  }

  /**
   * Hands one event to the core and returns the callback answer (a toast for a card tap). Answers
   * within the 3 s Feishu allows: past ~2.5 s the work goes on without holding the answer.
   */
  private async dispatch(type: string, data: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    const sink = this.sink;
    if (sink === undefined) return undefined;
    const eventId = typeof data.event_id === 'string' && data.event_id.length <= 256 ? data.event_id : undefined;
    if (eventId !== undefined && !(await this.seen.firstSight(`event:${eventId}`, this.clock.now() + EVENT_ID_KEPT_MS))) {
      this.ctx.log.info({ eventId }, `${this.name}: event ${eventId} was already taken, dropped`);
      return undefined;
    }
    let work: Promise<InboundResult | undefined>;
    if (type === 'im.message.receive_v1') work = this.onMessage(sink, data);
    else if (type === 'card.action.trigger') work = this.onCardAction(sink, data);
    else {
      this.ctx.log.debug({ type }, 'feishu: event type not handled, dropped');
      return undefined;
    }
    const tracked = work.catch((error: unknown) => {
      this.ctx.log.error({ err: error }, 'feishu: handling an event failed');
      return undefined;
    });
    this.inFlight.add(tracked);
    void tracked.finally(() => this.inFlight.delete(tracked));
    let timer: NodeJS.Timeout | undefined;
    const budget = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), CALLBACK_BUDGET_MS)));
    const result = await Promise.race([tracked, budget]);
    clearTimeout(timer);
    if (result === 'late' || result === undefined || type !== 'card.action.trigger') return undefined;
    return result.notice ? { toast: { type: 'info', content: result.notice } } : {};
  }

  private async onMessage(sink: InboundSink, data: Record<string, unknown>): Promise<InboundResult | undefined> {
    const parsed = messageReceiveSchema.safeParse(data);
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 2) }, 'feishu: message event not understood, dropped');
      return undefined;
    }
    const { sender, message } = parsed.data;
    // The bot's own messages and other apps' come with sender_type "app".
    if (sender.sender_type !== undefined && sender.sender_type !== 'user') return undefined;
    const text = textOf(message);
    if (text === undefined) return undefined;
    // In a topic thread, the root message keys the thread (replies go to it).
    const threadId = message.thread_id !== undefined ? (message.root_id ?? message.message_id) : undefined;
    return sink({ channel: this.name, chatId: message.chat_id, ...(threadId !== undefined ? { threadId } : {}), senderId: sender.sender_id.open_id, text });
  }

  private async onCardAction(sink: InboundSink, data: Record<string, unknown>): Promise<InboundResult | undefined> {
    const parsed = cardActionSchema.safeParse(data);
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 2) }, 'feishu: card action not understood, dropped');
      return undefined;
    }
    const { operator, action, context } = parsed.data;
    return sink({
      channel: this.name,
      chatId: context.open_chat_id,
      senderId: operator.open_id,
      text: action.value.cmd,
      fromButton: true,
      messageRef: { chatId: context.open_chat_id, messageId: context.open_message_id },
    });
  }
}

export const feishuAdapterFactory: ChannelAdapterFactory<typeof feishuConfigSchema> = {
  kind: 'feishu',
  configSchema: feishuConfigSchema,
  create: (config, ctx) => new FeishuAdapter(config, ctx),
  // Two long connections of one app split its events between them.
  distinctFields: ['appIdEnv'],
  // A named instance gets its own inbound route, /channels/<kind>/<name>, unless webhookPath says otherwise.
  instanceDefaults: (channel) => ({ webhookPath: channelRoutePath(channel) }),
};
