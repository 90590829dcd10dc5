import { timingSafeEqual } from 'node:crypto';
import { Bot, GrammyError, HttpError } from 'grammy';
import type { UserFromGetMe } from 'grammy/types';
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
  type RenderedApproval,
  channelField,
  channelRoutePath,
  seenIdsOf,
} from '../adapter.js';
import { ChannelConfigError, ChannelUnavailableError } from '../errors.js';
import { withRetry, type AttemptResult } from '../retry.js';
import { readSecretEnv } from '../secrets.js';
import { systemChannelClock, type ChannelClock, type SeenIds } from '../seen-ids.js';
import { telegramConfigSchema, type TelegramConfig } from './config.js';
import {
  clip,
  clipHead,
  inlineKeyboard,
  splitText,
  TELEGRAM_MAX_BUTTON_LABEL,
  TELEGRAM_MAX_BUTTONS,
  TELEGRAM_MAX_CALLBACK_DATA,
  TELEGRAM_MAX_CALLBACK_TEXT,
  TELEGRAM_MAX_TEXT,
  toHtml,
} from './render.js';

/**
 * Telegram adapter over grammY. Long polling (`getUpdates`) by default, so no public URL is needed;
 * in webhook mode Telegram posts updates to a route on `sage serve`, checked by its secret token.
 * Text messages reach the core as they are; an inline-keyboard tap arrives as a callback query whose
 * data is the option's command (`/approve k3f9 once`), delivered as that text and always answered
 * with answerCallbackQuery (the core's notice as the toast), so the button stops spinning.
 */

const userSchema = z.object({
  id: z.number().int(),
  is_bot: z.boolean(),
  first_name: z.string(),
  last_name: z.string().optional(),
  username: z.string().optional(),
});

const chatSchema = z.object({ id: z.number().int(), type: z.string() });

const messageSchema = z.object({
  message_id: z.number().int(),
  from: userSchema.optional(),
  chat: chatSchema,
  text: z.string().optional(),
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
});

/** A message a callback query comes from; an old one (over 48 h) is "inaccessible" and has no text, only its ids. */
const callbackMessageSchema = z.object({
  message_id: z.number().int(),
  chat: chatSchema,
  message_thread_id: z.number().int().optional(),
  is_topic_message: z.boolean().optional(),
});

const callbackQuerySchema = z.object({
  id: z.string().min(1),
  from: userSchema,
  message: callbackMessageSchema.optional(),
  data: z.string().optional(),
});

const updateSchema = z.object({
  update_id: z.number().int(),
  message: messageSchema.optional(),
  callback_query: callbackQuerySchema.optional(),
});

type TelegramUser = z.infer<typeof userSchema>;
type TelegramMessage = z.infer<typeof messageSchema>;
type TelegramCallbackQuery = z.infer<typeof callbackQuerySchema>;

/** The only updates the adapter reads; Telegram then does not send the others at all. */
const ALLOWED_UPDATES = ['message', 'callback_query'] as const;
/** A bot token as @BotFather issues it; anything else would also break the `/bot<token>/` URL. */
const TOKEN_FORMAT = /^\d+:[A-Za-z0-9_-]+$/;
/** Telegram's secret_token alphabet (setWebhook): 1–256 of A-Z a-z 0-9 _ -. */
const SECRET_FORMAT = /^[A-Za-z0-9_-]{1,256}$/;
/** Entries kept in the adapter's small memories (long commands by key, prompts' input views); the oldest go first. */
const MAX_REMEMBERED = 10_000;
/**
 * How long an update id is remembered: Telegram keeps an update it could not deliver for 24 hours,
 * so a redelivery (or a long poll's batch fetched again after a crash, before its offset was
 * confirmed) comes within that.
 */
const UPDATE_ID_KEPT_MS = 48 * 3600_000;
/** How long stop() waits for grammY's poll loop, which may sleep out a 429's retry_after before it notices. */
const STOP_WAIT_MS = 5_000;
/** The chat commands the core understands, for the clients' "/" menu (setMyCommands). */
const COMMAND_MENU = [
  { command: 'approve', description: 'Answer an approval: /approve <id> once|always|deny [reason]' },
  { command: 'answer', description: "Answer a question: /answer <id> <option number or text>" },
  { command: 'status', description: 'The run in this chat and what waits for an answer' },
  { command: 'stop', description: 'Stop the run in this chat' },
  { command: 'new', description: 'Start over: the next message starts a new run' },
];

export interface TelegramAdapterOptions {
  /** Retry loop overrides (tests). */
  baseDelayMs?: number;
  sleep?: (ms: number) => Promise<void>;
  /**
   * How long a tap waits for the core before the callback query is answered without its notice:
   * Telegram drops an answer that comes too late ("query is too old") and the button keeps spinning.
   */
  callbackDeadlineMs?: number;
}

/** The text of an error without the bot token (a network error's message holds the request URL). */
function reasonOf(error: unknown, token: string): string {
  let text: string;
  if (error instanceof GrammyError) text = `${error.error_code} ${error.description}`;
  else if (error instanceof HttpError) text = `${error.message} ${error.error instanceof Error ? error.error.message : ''}`.trim();
  else text = error instanceof Error ? error.message : String(error);
  return text.split(token).join('<token>');
}

/** Maps a Bot API call's failure to the retry loop's verdict: 429 waits retry_after, 5xx and network errors back off, the rest fail at once. */
function classify(error: unknown, token: string): AttemptResult<never> {
  const message = reasonOf(error, token);
  if (error instanceof GrammyError) {
    if (error.error_code === 429) {
      const after = error.parameters.retry_after;
      return { ok: false, retry: true, status: 429, message, ...(after !== undefined ? { retryAfterMs: after * 1000 } : {}) };
    }
    return { ok: false, retry: error.error_code >= 500, status: error.error_code, message };
  }
  // HttpError: the request never got a JSON answer (refused, reset, timed out, a proxy's HTML 502).
  return { ok: false, retry: true, message };
}

/** Telegram answers an edit that changes nothing with 400 "message is not modified": the message already shows it. */
function isNotModified(error: unknown): boolean {
  return error instanceof GrammyError && error.error_code === 400 && /message is not modified/i.test(error.description);
}

function chatIdParam(chatId: string): number | string {
  // Numeric ids go as numbers; `@channelname` stays a string (the Bot API takes both).
  return /^-?\d+$/.test(chatId) ? Number(chatId) : chatId;
}

/** A forum topic (or a private chat's topic) is a thread; a plain reply chain is not one to post into. */
function threadOf(message: { message_thread_id?: number | undefined; is_topic_message?: boolean | undefined }): string | undefined {
  return message.is_topic_message && message.message_thread_id !== undefined ? String(message.message_thread_id) : undefined;
}

function displayName(user: TelegramUser): string {
  return user.username ?? [user.first_name, user.last_name].filter(Boolean).join(' ');
}

export class TelegramAdapter implements ChannelAdapter {
  readonly specificationVersion = CHANNEL_ADAPTER_VERSION;
  readonly name: string;
  readonly limits = { maxText: TELEGRAM_MAX_TEXT, maxButtons: TELEGRAM_MAX_BUTTONS, maxButtonLabel: TELEGRAM_MAX_BUTTON_LABEL };
  readonly routes: readonly ChannelRoute[];
  /** The Bot API root: the bot's token follows it in each URL, so it is never shown. */
  get outboundUrl(): string {
    return this.config.apiRoot;
  }

  private readonly token: string;
  private readonly webhookSecret: string | undefined;
  private readonly bot: Bot;
  private sink: InboundSink | undefined;
  private me: UserFromGetMe | undefined;
  private polling: Promise<void> | undefined;
  private stopping = false;
  /** One chain per chat: a chat's messages and taps reach the core in the order they were sent. */
  private readonly chains = new Map<string, Promise<void>>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Commands longer than callback_data allows, under a short key (`~1a`). Lost on restart: the text still has the typed command. */
  private readonly longCommands = new Map<string, string>();
  private longSeq = 0;
  /** Update ids taken (in the store under `sage serve`): a redelivered or replayed update is dropped, across restarts too. */
  private readonly seenUpdates: SeenIds;
  private readonly clock: ChannelClock;
  /** The input view a prompt showed as code, by message, so the edit that adds its outcome keeps the look. */
  private readonly views = new Map<string, string>();
  /** Telegram user refs from the config, lower-cased `@username` → the entry as written (the core matches it exactly). */
  private readonly usernames = new Map<string, string>();

  constructor(
    private readonly config: TelegramConfig,
    private readonly ctx: AdapterContext,
    private readonly options: TelegramAdapterOptions = {},
  ) {
    this.name = ctx.name ?? 'telegram';
    this.seenUpdates = seenIdsOf(ctx);
    this.clock = ctx.clock ?? systemChannelClock;
    this.token = readSecretEnv(ctx.env, config.tokenEnv, channelField(this.name, 'tokenEnv'));
    if (!TOKEN_FORMAT.test(this.token)) {
      throw new ChannelConfigError(channelField(this.name, 'tokenEnv'), `${config.tokenEnv} does not hold a bot token (expected digits, a colon and letters, as @BotFather gives it)`);
    }
    if (config.mode === 'webhook') {
      this.webhookSecret = readSecretEnv(ctx.env, config.webhookSecretEnv, channelField(this.name, 'webhookSecretEnv'));
      if (!SECRET_FORMAT.test(this.webhookSecret)) {
        throw new ChannelConfigError(channelField(this.name, 'webhookSecretEnv'), `${config.webhookSecretEnv} must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's secret_token)`);
      }
    }
    for (const ref of [...config.approvers, ...(config.allowFrom ?? [])]) {
      if (ref.startsWith('@')) this.usernames.set(ref.toLowerCase(), ref);
    }
    // Our own retry loop (retry.ts) decides about sends; the client's timeout only has to outlast a long poll.
    this.bot = new Bot(this.token, { client: { apiRoot: config.apiRoot, timeoutSeconds: config.pollTimeoutSeconds + 30 } });
    this.bot.use(async (c) => this.onUpdate(c.update));
    this.bot.catch((error) => ctx.log.error({ reason: reasonOf(error.error, this.token) }, 'telegram: handling an update failed'));
    this.routes = config.mode === 'webhook' ? [{ method: 'POST', path: config.webhookPath, handle: (request) => this.onWebhook(request) }] : [];
  }

  async start(sink: InboundSink): Promise<ConnectedInfo> {
    const { apiRoot, tokenEnv } = this.config;
    try {
      this.me = await this.bot.api.getMe();
    } catch (error) {
      throw new ChannelUnavailableError(this.name, `getMe at ${apiRoot} failed: ${reasonOf(error, this.token)} (check ${tokenEnv})`, error instanceof GrammyError ? { cause: error } : undefined);
    }
    // Known now, so grammY does not call getMe again (its own init retries forever on a network error).
    this.bot.botInfo = this.me;
    this.sink = sink;
    // The "/" menu in the apps; a failure costs only the autocompletion.
    await this.bot.api.setMyCommands(COMMAND_MENU).catch((error: unknown) => this.ctx.log.warn({ reason: reasonOf(error, this.token) }, 'telegram: setMyCommands failed'));
    const who = `@${this.me.username}`;
    if (this.config.mode === 'webhook') {
      try {
        await this.bot.api.setWebhook(this.config.webhookUrl!, { secret_token: this.webhookSecret!, allowed_updates: [...ALLOWED_UPDATES] });
      } catch (error) {
        this.sink = undefined;
        // No cause: grammY's error carries the request payload, and with it the webhook secret.
        throw new ChannelUnavailableError(this.name, `setWebhook to ${this.config.webhookUrl} failed: ${reasonOf(error, this.token)}`);
      }
      return { description: `${this.name}: ${who} via ${apiRoot} (webhook ${this.config.webhookUrl})` };
    }
    await new Promise<void>((resolve, reject) => {
      let started = false;
      this.polling = this.bot
        .start({
          allowed_updates: [...ALLOWED_UPDATES],
          timeout: this.config.pollTimeoutSeconds,
          // Messages sent while the server was down are still answered.
          drop_pending_updates: false,
          onStart: () => {
            started = true;
            resolve();
          },
        })
        .catch((error: unknown) => {
          const reason = reasonOf(error, this.token);
          if (!started) {
            this.sink = undefined;
            reject(new ChannelUnavailableError(this.name, `long polling did not start: ${reason}`, error instanceof GrammyError ? { cause: error } : undefined));
            return;
          }
          // 401 (token revoked) or 409 (another process polls with this token): grammY gives up.
          this.ctx.log.error({ reason }, `telegram: long polling stopped: ${reason}`);
        });
    });
    return { description: `${this.name}: ${who} via ${apiRoot} (long polling)` };
  }

  async stop(): Promise<void> {
    if (this.stopping) {
      await this.pollLoopEnded();
      await Promise.allSettled([...this.inFlight]);
      return;
    }
    this.stopping = true;
    if (this.bot.isRunning()) {
      // Aborts the waiting getUpdates and confirms the offset, so a restart does not see the same updates again.
      await this.bot.stop().catch((error: unknown) => this.ctx.log.warn({ reason: reasonOf(error, this.token) }, 'telegram: confirming the update offset at stop failed'));
    }
    await this.pollLoopEnded();
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  /** No update reaches the core once `stopping` is set; this only keeps stop() from outliving a sleeping poll loop by long. */
  private async pollLoopEnded(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.polling, new Promise<void>((resolve) => (timer = setTimeout(resolve, STOP_WAIT_MS)).unref())]);
    clearTimeout(timer);
  }

  async send(message: OutboundMessage): Promise<MessageRef> {
    const chunks = splitText(message.text);
    let sentId = 0;
    for (const [i, chunk] of chunks.entries()) {
      // The buttons go on the last piece: that is the message the core edits once it is answered.
      const approval = i === chunks.length - 1 ? message.approval : undefined;
      const sent = await this.call(() =>
        this.bot.api.sendMessage(chatIdParam(message.chatId), toHtml(chunk, approval?.inputView), {
          parse_mode: 'HTML',
          link_preview_options: { is_disabled: true },
          ...(message.threadId !== undefined ? { message_thread_id: Number(message.threadId) } : {}),
          ...this.markup(approval),
        }),
      );
      sentId = sent.message_id;
      if (approval?.inputView) this.remember(this.views, `${message.chatId}:${sentId}`, approval.inputView);
    }
    return { chatId: message.chatId, ...(message.threadId !== undefined ? { threadId: message.threadId } : {}), messageId: String(sentId) };
  }

  async edit(ref: MessageRef, edit: MessageEdit): Promise<void> {
    // One message: past 4096 its start goes, the outcome line at the end stays. Without reply_markup
    // Telegram removes the inline keyboard.
    await this.call(async () => {
      try {
        const view = edit.approval?.inputView ?? this.views.get(`${ref.chatId}:${ref.messageId}`);
        await this.bot.api.editMessageText(chatIdParam(ref.chatId), Number(ref.messageId), toHtml(clipHead(edit.text), view), {
          parse_mode: 'HTML',
          link_preview_options: { is_disabled: true },
          ...this.markup(edit.approval),
        });
      } catch (error) {
        if (!isNotModified(error)) throw error;
      }
      return true;
    });
  }

  private markup(approval: RenderedApproval | undefined): { reply_markup?: NonNullable<ReturnType<typeof inlineKeyboard>> } {
    const keyboard = inlineKeyboard(approval, (command) => this.callbackData(command));
    return keyboard ? { reply_markup: keyboard } : {};
  }

  /**
   * A button's payload: its command when it fits Telegram's 64 bytes (a tap then works after a
   * restart too), else a short key into a map (a tap after a restart is told to type the command).
   */
  private callbackData(command: string): string {
    if (Buffer.byteLength(command, 'utf8') <= TELEGRAM_MAX_CALLBACK_DATA) return command;
    const key = `~${(++this.longSeq).toString(36)}`;
    this.remember(this.longCommands, key, command);
    return key;
  }

  /** A bounded map: past MAX_REMEMBERED entries the oldest goes. */
  private remember(map: Map<string, string>, key: string, value: string): void {
    map.set(key, value);
    if (map.size > MAX_REMEMBERED) map.delete(map.keys().next().value!);
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    const { baseDelayMs, sleep } = this.options;
    return withRetry({ channel: this.name, ...(baseDelayMs !== undefined ? { baseDelayMs } : {}), ...(sleep ? { sleep } : {}) }, async () => {
      try {
        return { ok: true, value: await request() };
      } catch (error) {
        return classify(error, this.token);
      }
    });
  }

  // ── inbound ──────────────────────────────────────────────────────────────────────────────

  private async onWebhook(request: Request): Promise<Response> {
    const given = Buffer.from(request.headers.get('x-telegram-bot-api-secret-token') ?? '');
    const secret = Buffer.from(this.webhookSecret ?? '');
    if (secret.length === 0 || given.length !== secret.length || !timingSafeEqual(given, secret)) return new Response('unauthorized', { status: 401 });
    // Not started (or stopping): a non-2xx makes Telegram deliver it again later.
    if (!this.sink || this.stopping) return new Response('not ready', { status: 503 });
    let update: unknown;
    try {
      update = await request.json();
    } catch {
      return new Response('bad json', { status: 400 });
    }
    // Answered at once: Telegram waits for this response before it sends the chat's next update.
    await this.onUpdate(update);
    return new Response(null, { status: 200 });
  }

  /** Sorts an update onto its chat's chain and returns at once (the poll loop goes on). */
  private async onUpdate(raw: unknown): Promise<void> {
    const sink = this.sink;
    if (!sink || this.stopping) return;
    const parsed = updateSchema.safeParse(raw);
    if (!parsed.success) {
      this.ctx.log.warn({ issues: parsed.error.issues.slice(0, 2) }, 'telegram: update not understood, dropped');
      return;
    }
    const update = parsed.data;
    // A webhook delivery that timed out on Telegram's side comes again with the same id, and so
    // does a polled batch whose offset a crash kept from being confirmed. Awaited before the update
    // joins its chat's chain: updates are handed over one at a time, so their order holds.
    if (!(await this.seenUpdates.firstSight(String(update.update_id), this.clock.now() + UPDATE_ID_KEPT_MS))) {
      this.ctx.log.info({ updateId: update.update_id }, `${this.name}: update ${update.update_id} was already taken, dropped`);
      return;
    }
    if (update.message) {
      const message = update.message;
      this.enqueue(String(message.chat.id), () => this.onMessage(sink, message));
    } else if (update.callback_query) {
      const query = update.callback_query;
      this.enqueue(query.message ? String(query.message.chat.id) : `query:${query.id}`, () => this.onCallbackQuery(sink, query));
    }
  }

  private enqueue(chat: string, work: () => Promise<void>): void {
    const next = (this.chains.get(chat) ?? Promise.resolve()).then(work).catch((error: unknown) => this.ctx.log.error({ err: error }, 'telegram: handling an update failed'));
    this.chains.set(chat, next);
    this.inFlight.add(next);
    void next.finally(() => {
      this.inFlight.delete(next);
      if (this.chains.get(chat) === next) this.chains.delete(chat);
    });
  }

  /**
   * The sender as the config names them: a numeric id, or the `@username` entry when only that is
   * listed (the core matches approvers by exact string).
   */
  private senderIdOf(user: TelegramUser): string {
    const id = String(user.id);
    const listed = [...this.config.approvers, ...(this.config.allowFrom ?? [])];
    if (listed.includes(id) || !user.username) return id;
    return this.usernames.get(`@${user.username.toLowerCase()}`) ?? id;
  }

  private async onMessage(sink: InboundSink, message: TelegramMessage): Promise<void> {
    // Photos, stickers, joins and other bots' posts are not something a person asked Sage.
    if (message.text === undefined || !message.from || message.from.is_bot) {
      this.ctx.log.debug({ chatId: message.chat.id }, 'telegram: non-text message dropped');
      return;
    }
    // "@sage_bot do this" in a group: the mention addresses the bot, it is not part of the request.
    const username = this.me?.username;
    const text = username ? message.text.replace(new RegExp(`^\\s*@${username}\\b[\\s,:]*`, 'i'), '') : message.text;
    if (text.trim() === '') return;
    const threadId = threadOf(message);
    if (/^\/start(@\w+)?(\s|$)/i.test(text.trim())) {
      // Only for someone the channel serves: anyone else hears nothing (the core's rule), and the
      // operator finds their id in the log to let them in.
      const senderId = this.senderIdOf(message.from);
      if ([...this.config.approvers, ...(this.config.allowFrom ?? [])].includes(senderId)) await this.welcome(message, threadId);
      else this.ctx.log.info({ senderId, ...(message.from.username ? { username: `@${message.from.username}` } : {}) }, 'telegram: /start from a sender not in approvers or allowFrom, not answered');
      return;
    }
    await sink({
      channel: this.name,
      chatId: String(message.chat.id),
      ...(threadId !== undefined ? { threadId } : {}),
      senderId: this.senderIdOf(message.from),
      senderName: displayName(message.from),
      text,
    });
  }

  /**
   * Telegram apps send `/start` when someone opens the bot: a platform greeting, not a task for the
   * agent. It says how to talk to Sage and the person's own id, which is what `approvers` lists.
   */
  private async welcome(message: TelegramMessage, threadId: string | undefined): Promise<void> {
    const from = message.from!;
    const text = [
      `Hi ${displayName(from)}, this is Sage. Write a task and an agent run starts in this chat; what you write while it works is queued for it.`,
      'Approvals come with buttons, or type /approve <id> once|always|deny. /status shows what waits, /stop stops the run, /new starts over.',
      `Your Telegram user id is ${from.id}${from.username ? ` (@${from.username})` : ''}: an approver is listed by it in the server's ${channelField(this.name, 'approvers')}.`,
    ].join('\n\n');
    await this.send({ chatId: String(message.chat.id), ...(threadId !== undefined ? { threadId } : {}), text }).catch((error: unknown) =>
      this.ctx.log.warn({ reason: error instanceof Error ? error.message : String(error) }, 'telegram: the /start greeting was not sent'),
    );
  }

  private async onCallbackQuery(sink: InboundSink, query: TelegramCallbackQuery): Promise<void> {
    const data = query.data ?? '';
    const command = data.startsWith('/') ? data : this.longCommands.get(data);
    if (!query.message || command === undefined) {
      await this.answerCallback(query.id, { handled: 'notice', notice: 'This button no longer works here; type the command shown in the message instead.' });
      return;
    }
    const threadId = threadOf(query.message);
    const chatId = String(query.message.chat.id);
    const delivered = sink({
      channel: this.name,
      chatId,
      ...(threadId !== undefined ? { threadId } : {}),
      senderId: this.senderIdOf(query.from),
      senderName: displayName(query.from),
      text: command,
      fromButton: true,
      messageRef: { chatId, ...(threadId !== undefined ? { threadId } : {}), messageId: String(query.message.message_id) },
    });
    // Every tap is answered, in time: with the core's notice, or without one when the core is slow or fails.
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), this.options.callbackDeadlineMs ?? 10_000);
      timer.unref();
    });
    let result: InboundResult | undefined;
    try {
      result = await Promise.race([delivered, late]);
    } catch (error) {
      this.ctx.log.error({ err: error }, 'telegram: a tap failed in the core');
    } finally {
      clearTimeout(timer);
    }
    await this.answerCallback(query.id, result);
    if (result === undefined) await delivered.catch(() => {});
  }

  private async answerCallback(queryId: string, result: InboundResult | undefined): Promise<void> {
    const notice = result?.notice;
    // A refusal or "already answered" is an alert the person has to dismiss; a done answer is a toast.
    const alert = result !== undefined && result.handled !== 'approval';
    await this.bot.api
      .answerCallbackQuery(queryId, notice ? { text: clip(notice, TELEGRAM_MAX_CALLBACK_TEXT), show_alert: alert } : {})
      .catch((error: unknown) => this.ctx.log.warn({ reason: reasonOf(error, this.token) }, 'telegram: answerCallbackQuery failed'));
  }
}

export const telegramAdapterFactory: ChannelAdapterFactory<typeof telegramConfigSchema> = {
  kind: 'telegram',
  configSchema: telegramConfigSchema,
  create: (config, ctx) => new TelegramAdapter(config, ctx),
  // Two pollers of one bot token take each other's updates (Telegram answers the second getUpdates 409).
  distinctFields: ['tokenEnv'],
  // A named instance gets its own inbound route, /channels/<kind>/<name>, unless webhookPath says otherwise.
  instanceDefaults: (channel) => ({ webhookPath: channelRoutePath(channel) }),
};
