import { App, LogLevel, webApi, type Logger } from '@slack/bolt';
import { z } from 'zod';
import {
  CHANNEL_ADAPTER_VERSION,
  type AdapterContext,
  type ChannelAdapter,
  type ChannelAdapterFactory,
  type ChannelLogger,
  type ConnectedInfo,
  type InboundSink,
  type MessageEdit,
  type MessageRef,
  type OutboundMessage,
  channelField,
  seenIdsOf,
} from '../adapter.js';
import { ChannelUnavailableError } from '../errors.js';
import { withRetry, type AttemptResult } from '../retry.js';
import { readSecretEnv } from '../secrets.js';
import { systemChannelClock, type ChannelClock, type SeenIds } from '../seen-ids.js';
import { slackConfigSchema, type SlackConfig } from './config.js';
import { clip, escapeSlackText, renderSlackBlocks, SLACK_ACTION_PREFIX, SLACK_MAX_BUTTON_TEXT, SLACK_MAX_BUTTONS, SLACK_MAX_TEXT } from './render.js';

/**
 * Slack adapter: Bolt in Socket Mode, so no public URL is needed. Messages (DMs, and channels the
 * bot is in) reach the core as text; a Block Kit button press is acknowledged at once (Slack wants
 * the ack within 3 s) and delivered as its command; the core's notice for it comes back as an
 * ephemeral message only the tapping person sees.
 */

const messageEventSchema = z.object({
  type: z.literal('message'),
  subtype: z.string().optional(),
  bot_id: z.string().optional(),
  channel: z.string().min(1),
  user: z.string().min(1),
  text: z.string(),
  ts: z.string(),
  thread_ts: z.string().optional(),
});

const blockActionSchema = z.object({
  type: z.literal('block_actions'),
  user: z.object({ id: z.string().min(1), username: z.string().optional(), name: z.string().optional() }),
  channel: z.object({ id: z.string().min(1) }),
  message: z.object({ ts: z.string().min(1), thread_ts: z.string().optional() }),
  actions: z.array(z.object({ action_id: z.string(), value: z.string().max(2000) })).min(1),
});

const slashCommandSchema = z.object({
  command: z.string().regex(/^\/[a-z][a-z0-9_-]*$/),
  text: z.string(),
  user_id: z.string().min(1),
  user_name: z.string().optional(),
  channel_id: z.string().min(1),
});

const postResultSchema = z.object({ ts: z.string().min(1) });

/**
 * How long an event id is remembered. Slack retries an event it saw no ack for three times within
 * minutes (retry_attempt 1-3); a day covers that with room, for a restart in between.
 */
const EVENT_ID_KEPT_MS = 24 * 3600_000;

/** Web API errors worth another try: Slack says so (rate limit, its own trouble) or the network failed. */
const RETRYABLE_PLATFORM_ERRORS = new Set(['ratelimited', 'internal_error', 'fatal_error', 'service_unavailable', 'request_timeout']);

function boltLogger(log: ChannelLogger): Logger {
  let level = LogLevel.INFO;
  return {
    debug: (...msg: unknown[]) => log.debug({ bolt: msg.map(String).join(' ') }),
    info: (...msg: unknown[]) => log.info({ bolt: msg.map(String).join(' ') }),
    warn: (...msg: unknown[]) => log.warn({ bolt: msg.map(String).join(' ') }),
    error: (...msg: unknown[]) => log.error({ bolt: msg.map(String).join(' ') }),
    setLevel: (l: LogLevel) => void (level = l),
    getLevel: () => level,
    setName: () => {},
  };
}

/** Maps a Web API client error to the retry loop's verdict. */
function classify(error: unknown): AttemptResult<never> {
  const e = error as { code?: string; retryAfter?: number; statusCode?: number; data?: { error?: string }; message?: string };
  const message = e.message ?? String(error);
  switch (e.code) {
    case webApi.ErrorCode.RateLimitedError:
      return { ok: false, retry: true, status: 429, message, ...(e.retryAfter !== undefined ? { retryAfterMs: e.retryAfter * 1000 } : {}) };
    case webApi.ErrorCode.RequestError:
      return { ok: false, retry: true, message };
    case webApi.ErrorCode.HTTPError:
      return { ok: false, retry: (e.statusCode ?? 0) >= 500, ...(e.statusCode !== undefined ? { status: e.statusCode } : {}), message };
    case webApi.ErrorCode.PlatformError:
      return { ok: false, retry: RETRYABLE_PLATFORM_ERRORS.has(e.data?.error ?? ''), message };
    default:
      return { ok: false, retry: false, message };
  }
}

export class SlackAdapter implements ChannelAdapter {
  readonly specificationVersion = CHANNEL_ADAPTER_VERSION;
  readonly name: string;
  readonly limits = { maxButtons: SLACK_MAX_BUTTONS, maxButtonLabel: SLACK_MAX_BUTTON_TEXT, maxText: SLACK_MAX_TEXT };
  readonly routes = [];
  get outboundUrl(): string {
    return this.config.slackApiUrl;
  }

  private readonly botToken: string;
  private readonly appToken: string;
  private readonly client: webApi.WebClient;
  private app: App | undefined;
  private botUserId: string | undefined;
  private readonly inFlight = new Set<Promise<unknown>>();
  /** Event ids taken (in the store under `sage serve`): a retried event is dropped, across restarts too. */
  private readonly seenEvents: SeenIds;
  private readonly clock: ChannelClock;

  constructor(
    private readonly config: SlackConfig,
    private readonly ctx: AdapterContext,
    private readonly retry: { baseDelayMs?: number; sleep?: (ms: number) => Promise<void> } = {},
  ) {
    this.name = ctx.name ?? 'slack';
    this.seenEvents = seenIdsOf(ctx);
    this.clock = ctx.clock ?? systemChannelClock;
    this.botToken = readSecretEnv(ctx.env, config.botTokenEnv, channelField(this.name, 'botTokenEnv'));
    this.appToken = readSecretEnv(ctx.env, config.appTokenEnv, channelField(this.name, 'appTokenEnv'));
    this.client = new webApi.WebClient(this.botToken, this.clientOptions());
  }

  /** Our own retry loop (retry.ts) decides; the client's built-in one would wait up to 30 minutes. */
  private clientOptions(): webApi.WebClientOptions {
    return { slackApiUrl: this.config.slackApiUrl, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true, logger: boltLogger(this.ctx.log) };
  }

  async start(sink: InboundSink): Promise<ConnectedInfo> {
    let identity: { user_id?: string; bot_id?: string; user?: string; team?: string };
    try {
      identity = await this.client.auth.test();
    } catch (error) {
      const reason = (error as { data?: { error?: string } }).data?.error ?? (error as Error).message;
      throw new ChannelUnavailableError(this.name, `auth.test at ${this.config.slackApiUrl} failed: ${reason} (check ${this.config.botTokenEnv})`, { cause: error });
    }
    if (!identity.user_id || !identity.bot_id) {
      throw new ChannelUnavailableError(this.name, `${this.config.botTokenEnv} is not a bot token (auth.test names no bot); use the xoxb- token`);
    }
    this.botUserId = identity.user_id;
    const app = new App({
      token: this.botToken,
      appToken: this.appToken,
      socketMode: true,
      // Given, so Bolt does not call auth.test again (and ignores the bot's own messages by these ids).
      botUserId: identity.user_id,
      botId: identity.bot_id,
      clientOptions: this.clientOptions(),
      logger: boltLogger(this.ctx.log),
    });
    app.event('message', async ({ event, body }) => this.track(this.onEvent(sink, event, body)));
    app.action(new RegExp(`^${SLACK_ACTION_PREFIX}`), async ({ ack, body }) => {
      await ack();
      await this.track(this.onAction(sink, body));
    });
    // Slack takes a message starting with "/" as a slash command and never posts it, so the typed
    // commands (/approve, /answer, /stop, /new) arrive as slash commands of the app: delivered as the
    // same text a person would have typed anywhere else.
    app.command(/^\/[a-z][a-z0-9_-]*$/, async ({ ack, command }) => {
      await ack();
      await this.track(this.onCommand(sink, command));
    });
    app.error(async (error) => this.ctx.log.error({ err: error }, 'slack: a listener failed'));
    try {
      await app.start();
    } catch (error) {
      await app.stop().catch(() => {});
      throw new ChannelUnavailableError(this.name, `Socket Mode did not connect: ${(error as Error).message} (check ${this.config.appTokenEnv}, an xapp- token with connections:write)`, { cause: error });
    }
    this.app = app;
    return { description: `${this.name}: @${identity.user ?? identity.user_id} in ${identity.team ?? 'the workspace'} via ${this.config.slackApiUrl} (Socket Mode)` };
  }

  async stop(): Promise<void> {
    const app = this.app;
    this.app = undefined;
    if (app) await app.stop().catch((error: unknown) => this.ctx.log.warn({ err: error }, 'slack: stopping Socket Mode failed'));
    await Promise.allSettled([...this.inFlight]);
  }

  async send(message: OutboundMessage): Promise<MessageRef> {
    const ts = await this.call(() =>
      this.client.chat.postMessage({
        channel: message.chatId,
        text: escapeSlackText(clip(message.text, SLACK_MAX_TEXT)),
        blocks: renderSlackBlocks(message.text, message.approval),
        ...(message.threadId !== undefined ? { thread_ts: message.threadId } : {}),
        unfurl_links: false,
        unfurl_media: false,
      }),
    );
    return { chatId: message.chatId, ...(message.threadId !== undefined ? { threadId: message.threadId } : {}), messageId: ts };
  }

  async edit(ref: MessageRef, edit: MessageEdit): Promise<void> {
    // The blocks are replaced whole: without an approval the actions block (the buttons) is gone.
    await this.call(() =>
      this.client.chat.update({ channel: ref.chatId, ts: ref.messageId, text: escapeSlackText(clip(edit.text, SLACK_MAX_TEXT)), blocks: renderSlackBlocks(edit.text, edit.approval) }),
    );
  }

  private async call(request: () => Promise<unknown>): Promise<string> {
    return withRetry({ channel: this.name, ...this.retry }, async () => {
      try {
        const parsed = postResultSchema.safeParse(await request());
        return parsed.success ? { ok: true, value: parsed.data.ts } : { ok: false, retry: false, message: 'Slack answered without a message ts' };
      } catch (error) {
        return classify(error);
      }
    });
  }

  private async track<T>(work: Promise<T>): Promise<void> {
    this.inFlight.add(work);
    try {
      await work;
    } catch (error) {
      this.ctx.log.error({ err: error }, 'slack: handling an event failed');
    } finally {
      this.inFlight.delete(work);
    }
  }

  /**
   * An Events API delivery: Slack sends one again (a new envelope, the same `event_id`) when it saw
   * no ack in time, including across our restart. Socket Mode deliveries are not signed (the
   * connection is opened with the app token), so there is no signing time to check here.
   */
  private async onEvent(sink: InboundSink, event: unknown, body: unknown): Promise<void> {
    const eventId = (body as { event_id?: unknown } | undefined)?.event_id;
    if (typeof eventId === 'string' && eventId.length > 0 && eventId.length <= 256) {
      if (!(await this.seenEvents.firstSight(eventId, this.clock.now() + EVENT_ID_KEPT_MS))) {
        this.ctx.log.info({ eventId }, `${this.name}: event ${eventId} was already taken, dropped`);
        return;
      }
    }
    await this.onMessage(sink, event);
  }

  private async onMessage(sink: InboundSink, event: unknown): Promise<void> {
    const parsed = messageEventSchema.safeParse(event);
    // Edits, joins, bot posts and file shares carry a subtype or a bot_id: not something a person said to Sage.
    if (!parsed.success) {
      this.ctx.log.debug({ issues: parsed.error.issues.slice(0, 2) }, 'slack: message event dropped');
      return;
    }
    const m = parsed.data;
    if (m.subtype !== undefined || m.bot_id !== undefined) return;
    // "@sage do this" in a channel: the mention is addressing, not part of the request.
    const text = this.botUserId ? m.text.replace(new RegExp(`^\\s*<@${this.botUserId}>\\s*`), '') : m.text;
    await sink({ channel: this.name, chatId: m.channel, ...(m.thread_ts !== undefined ? { threadId: m.thread_ts } : {}), senderId: m.user, text });
  }

  private async onCommand(sink: InboundSink, command: unknown): Promise<void> {
    const parsed = slashCommandSchema.safeParse(command);
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 2) }, 'slack: slash command payload not understood, dropped');
      return;
    }
    const c = parsed.data;
    // Typed, as far as the core is concerned: it answers in the chat itself (no ephemeral here, or
    // the person would read the notice twice).
    await sink({
      channel: this.name,
      chatId: c.channel_id,
      senderId: c.user_id,
      ...(c.user_name !== undefined ? { senderName: c.user_name } : {}),
      text: `${c.command} ${c.text}`.trim(),
    });
  }

  private async postNotice(channel: string, user: string, notice: string, threadTs?: string): Promise<void> {
    await this.client.chat
      .postEphemeral({ channel, user, text: escapeSlackText(notice), ...(threadTs !== undefined ? { thread_ts: threadTs } : {}) })
      .then(
        () => undefined,
        (error: unknown) => this.ctx.log.warn({ err: error }, 'slack: could not post the notice'),
      );
  }

  private async onAction(sink: InboundSink, body: unknown): Promise<void> {
    const parsed = blockActionSchema.safeParse(body);
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 2) }, 'slack: block_actions payload not understood, dropped');
      return;
    }
    const b = parsed.data;
    const action = b.actions.find((a) => a.action_id.startsWith(SLACK_ACTION_PREFIX));
    if (action === undefined) return;
    const threadId = b.message.thread_ts;
    const result = await sink({
      channel: this.name,
      chatId: b.channel.id,
      ...(threadId !== undefined ? { threadId } : {}),
      senderId: b.user.id,
      ...(b.user.username ?? b.user.name ? { senderName: (b.user.username ?? b.user.name)! } : {}),
      text: action.value,
      fromButton: true,
      messageRef: { chatId: b.channel.id, ...(threadId !== undefined ? { threadId } : {}), messageId: b.message.ts },
    });
    if (result.notice) await this.postNotice(b.channel.id, b.user.id, result.notice, threadId);
  }
}

export const slackAdapterFactory: ChannelAdapterFactory<typeof slackConfigSchema> = {
  kind: 'slack',
  configSchema: slackConfigSchema,
  create: (config, ctx) => new SlackAdapter(config, ctx),
  // One Socket Mode connection per Slack app: two connections of one app token split its events
  // between them, and a bot token posts as one workspace's bot.
  distinctFields: ['botTokenEnv', 'appTokenEnv'],
};
