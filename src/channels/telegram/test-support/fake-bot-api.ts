import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake Telegram Bot API on 127.0.0.1 for tests, speaking the real wire format: `POST
 * /bot<token>/<method>` with a JSON body, answered `{ ok: true, result }` or `{ ok: false,
 * error_code, description, parameters? }`. It keeps what the bot sent (with edits applied), parses
 * HTML parse mode as Telegram does (an unescaped `<` is refused), checks the limits the adapter must
 * respect (4096 characters, callback_data 1–64 bytes), and serves updates by `getUpdates` long
 * polling (offset confirms, timeout waits, a second poller gets 409) or records a webhook.
 */

export interface FakeUser {
  id: number;
  username?: string;
  firstName?: string;
}

export interface FakeButton {
  text: string;
  callback_data: string;
  style?: string;
}

export interface FakeTelegramMessage {
  chatId: string;
  messageId: number;
  threadId?: string;
  /** The text as the person sees it (HTML parsed). */
  text: string;
  /** What the bot sent, before parsing. */
  raw: string;
  parseMode?: string;
  /** `pre`/`code`/… entities from the HTML. */
  entities: { type: string; offset: number; length: number }[];
  /** The keyboard it shows now (rows). */
  keyboard: FakeButton[][];
  /** The buttons as first sent: a stale phone can still tap them. */
  firstButtons: FakeButton[];
  edited: boolean;
}

export interface CallbackAnswer {
  text?: string;
  show_alert?: boolean;
}

type Failure = { status: 429; retryAfter: number } | { status: 500 } | { status: 400; description: string };

interface Waiter {
  res: ServerResponse;
  timer: NodeJS.Timeout;
  offset: number;
  limit: number;
}

class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: Record<string, unknown>,
  ) {
    super(description);
  }
}

const ENTITY_TAGS: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  code: 'code',
  pre: 'pre',
  a: 'text_link',
  'tg-spoiler': 'spoiler',
  span: 'spoiler',
  blockquote: 'blockquote',
};
const NAMED_ENTITIES: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

/** Telegram's HTML parse mode: supported tags become entities, the four named entities and &#N; decode, anything else with `<` is refused. */
export function parseTelegramHtml(html: string): { text: string; entities: FakeTelegramMessage['entities'] } {
  let text = '';
  const entities: FakeTelegramMessage['entities'] = [];
  const open: { tag: string; offset: number }[] = [];
  for (let i = 0; i < html.length; ) {
    const ch = html[i]!;
    if (ch === '<') {
      const end = html.indexOf('>', i);
      const m = end < 0 ? null : /^<(\/?)([a-z-]+)(\s[^>]*)?>$/i.exec(html.slice(i, end + 1));
      if (!m) throw new ApiError(400, `Bad Request: can't parse entities: Unexpected character "<" at byte offset ${Buffer.byteLength(html.slice(0, i))}`);
      const tag = m[2]!.toLowerCase();
      if (!(tag in ENTITY_TAGS)) throw new ApiError(400, `Bad Request: can't parse entities: Unsupported start tag "${tag}" at byte offset ${Buffer.byteLength(html.slice(0, i))}`);
      if (m[1]) {
        const top = open.pop();
        if (!top || top.tag !== tag) throw new ApiError(400, `Bad Request: can't parse entities: Unmatched end tag at byte offset ${Buffer.byteLength(html.slice(0, i))}, expected "</${top?.tag ?? ''}>", found "</${tag}>"`);
        if (text.length > top.offset) entities.push({ type: ENTITY_TAGS[tag]!, offset: top.offset, length: text.length - top.offset });
      } else {
        open.push({ tag, offset: text.length });
      }
      i = end + 1;
    } else if (ch === '&') {
      const m = /^&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]+);/i.exec(html.slice(i, i + 12));
      const name = m?.[1];
      if (name && name.startsWith('#')) {
        text += String.fromCodePoint(name[1] === 'x' || name[1] === 'X' ? parseInt(name.slice(2), 16) : Number(name.slice(1)));
        i += m![0].length;
      } else if (name && NAMED_ENTITIES[name.toLowerCase()] !== undefined) {
        text += NAMED_ENTITIES[name.toLowerCase()];
        i += m![0].length;
      } else {
        // Telegram keeps a lone & as it is.
        text += ch;
        i++;
      }
    } else {
      text += ch;
      i++;
    }
  }
  if (open.length) throw new ApiError(400, `Bad Request: can't parse entities: Can't find end tag corresponding to start tag "${open[open.length - 1]!.tag}"`);
  return { text, entities };
}

export class FakeBotApi {
  readonly messages: FakeTelegramMessage[] = [];
  readonly calls: { method: string; params: Record<string, any> }[] = [];
  readonly callbackAnswers = new Map<string, CallbackAnswer>();
  /** Failures for the next sendMessage/editMessageText calls, in order, before they succeed again. */
  readonly failNext: Failure[] = [];
  /** The "/" menu the bot set (setMyCommands). */
  commands: { command: string; description: string }[] = [];
  webhook: { url: string; secretToken?: string; allowedUpdates?: string[] } | undefined;
  private server: Server | undefined;
  private port = 0;
  private updates: { update_id: number; [kind: string]: unknown }[] = [];
  private nextUpdateId = 100;
  private nextMessageId = 1;
  private nextQueryId = 1;
  private allowedUpdates: string[] = [];
  private waiter: Waiter | undefined;
  private readonly answerWaits = new Map<string, (answer: CallbackAnswer) => void>();
  private readonly pendingQueries = new Set<string>();
  readonly bot = { id: 7_000_000_001, is_bot: true, first_name: 'Sage', username: 'sage_test_bot' };

  constructor(readonly token: string) {}

  get apiRoot(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** How many getUpdates calls wait right now (0 or 1). */
  get polling(): number {
    return this.waiter ? 1 : 0;
  }

  async listen(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    if (this.waiter) this.finishPoll([]);
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  messagesIn(chatId: string): FakeTelegramMessage[] {
    return this.messages.filter((m) => m.chatId === chatId);
  }

  // ── what people do ───────────────────────────────────────────────────────────────────────

  private userObject(from: FakeUser) {
    return { id: from.id, is_bot: false, first_name: from.firstName ?? from.username ?? `user${from.id}`, ...(from.username ? { username: from.username } : {}) };
  }

  private chatObject(chatId: string, from?: FakeUser) {
    const id = Number(chatId);
    return { id, type: from && from.id === id ? 'private' : id < 0 ? 'supergroup' : 'group' };
  }

  /** A person writes in a chat (a forum topic when `threadId` is given); returns the update id. */
  userSays(chatId: string, from: FakeUser, text: string, options: { threadId?: string } = {}): number {
    const message = {
      message_id: this.nextMessageId++,
      from: this.userObject(from),
      chat: this.chatObject(chatId, from),
      date: Math.floor(Date.now() / 1000),
      text,
      ...(options.threadId !== undefined ? { message_thread_id: Number(options.threadId), is_topic_message: true } : {}),
    };
    return this.push({ message });
  }

  /** A person taps a button with `data` on a message the bot sent; returns the callback query id. */
  userTaps(chatId: string, messageId: number, data: string, from: FakeUser): string {
    const sent = this.messages.find((m) => m.chatId === chatId && m.messageId === messageId);
    if (!sent) throw new Error(`fake telegram: no message ${messageId} in chat ${chatId}`);
    const id = String(this.nextQueryId++ * 1_000_003);
    this.pendingQueries.add(id);
    this.push({ callback_query: { id, from: this.userObject(from), message: this.messageObject(sent), chat_instance: `ci${chatId}`, data } });
    return id;
  }

  /** Resolves with the bot's answerCallbackQuery for that tap. */
  waitForCallbackAnswer(queryId: string): Promise<CallbackAnswer> {
    const answered = this.callbackAnswers.get(queryId);
    if (answered) return Promise.resolve(answered);
    return new Promise((resolve) => this.answerWaits.set(queryId, resolve));
  }

  /** Any update (a malformed one too, for tests); returns its id. */
  push(update: Record<string, unknown>): number {
    const update_id = this.nextUpdateId++;
    this.updates.push({ update_id, ...update });
    if (this.waiter) this.answerPoll(this.waiter);
    return update_id;
  }

  /** Updates not yet confirmed by an offset (webhook mode: what Telegram would post). */
  pendingUpdates(): { update_id: number; [kind: string]: unknown }[] {
    return [...this.updates];
  }

  // ── the Bot API ──────────────────────────────────────────────────────────────────────────

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const match = /^\/bot([^/]+)\/([A-Za-z]+)$/.exec((req.url ?? '').split('?')[0]!);
    if (req.method !== 'POST' && req.method !== 'GET') return this.reply(res, 405, { ok: false, error_code: 405, description: 'Method Not Allowed' });
    if (!match) return this.reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    if (decodeURIComponent(match[1]!) !== this.token) return this.reply(res, 401, { ok: false, error_code: 401, description: 'Unauthorized' });
    const method = match[2]!;
    let params: Record<string, any> = {};
    const body = Buffer.concat(chunks).toString('utf8');
    if (body.trim() !== '') {
      try {
        params = JSON.parse(body) as Record<string, any>;
      } catch {
        return this.reply(res, 400, { ok: false, error_code: 400, description: 'Bad Request: invalid JSON' });
      }
    }
    this.calls.push({ method, params });
    try {
      if (method === 'getUpdates') return this.getUpdates(params, req, res);
      const result = this.call(method, params);
      this.reply(res, 200, { ok: true, result });
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
      this.reply(res, error.code, { ok: false, error_code: error.code, description: error.description, ...(error.parameters ? { parameters: error.parameters } : {}) });
    }
  }

  private reply(res: ServerResponse, status: number, body: unknown): void {
    if (res.writableEnded || res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  }

  private failure(): void {
    const next = this.failNext.shift();
    if (!next) return;
    if (next.status === 429) throw new ApiError(429, `Too Many Requests: retry after ${next.retryAfter}`, { retry_after: next.retryAfter });
    if (next.status === 500) throw new ApiError(500, 'Internal Server Error');
    throw new ApiError(400, next.description);
  }

  private call(method: string, p: Record<string, any>): unknown {
    switch (method) {
      case 'getMe':
        return { ...this.bot, can_join_groups: true, can_read_all_group_messages: false, supports_inline_queries: false };
      case 'deleteWebhook':
        this.webhook = undefined;
        if (p['drop_pending_updates']) this.updates = [];
        return true;
      case 'setWebhook':
        if (typeof p['url'] !== 'string' || !p['url']) throw new ApiError(400, 'Bad Request: bad webhook: An HTTPS URL must be provided for webhook');
        this.webhook = { url: p['url'], ...(p['secret_token'] ? { secretToken: String(p['secret_token']) } : {}), ...(p['allowed_updates'] ? { allowedUpdates: p['allowed_updates'] as string[] } : {}) };
        return true;
      case 'setMyCommands': {
        const commands = p['commands'] as { command?: string; description?: string }[] | undefined;
        if (!Array.isArray(commands) || commands.some((c) => !/^[a-z0-9_]{1,32}$/.test(c.command ?? '') || !c.description || c.description.length > 256)) {
          throw new ApiError(400, 'Bad Request: BOT_COMMAND_INVALID');
        }
        this.commands = commands.map((c) => ({ command: c.command!, description: c.description! }));
        return true;
      }
      case 'sendMessage':
        return this.sendMessage(p);
      case 'editMessageText':
        return this.editMessageText(p);
      case 'answerCallbackQuery': {
        const id = String(p['callback_query_id'] ?? '');
        if (!this.pendingQueries.delete(id)) throw new ApiError(400, 'Bad Request: query is too old and response timeout expired or query ID is invalid');
        const answer: CallbackAnswer = { ...(p['text'] !== undefined ? { text: String(p['text']) } : {}), ...(p['show_alert'] !== undefined ? { show_alert: Boolean(p['show_alert']) } : {}) };
        if ((answer.text?.length ?? 0) > 200) throw new ApiError(400, 'Bad Request: MESSAGE_TOO_LONG');
        this.callbackAnswers.set(id, answer);
        this.answerWaits.get(id)?.(answer);
        this.answerWaits.delete(id);
        return true;
      }
      default:
        throw new ApiError(404, 'Not Found');
    }
  }

  private parseText(p: Record<string, any>): { text: string; entities: FakeTelegramMessage['entities'] } {
    const raw = String(p['text'] ?? '');
    const parsed = p['parse_mode'] === 'HTML' ? parseTelegramHtml(raw) : { text: raw, entities: [] };
    if (parsed.text.trim() === '') throw new ApiError(400, 'Bad Request: message text is empty');
    if (parsed.text.length > 4096) throw new ApiError(400, 'Bad Request: message is too long');
    return parsed;
  }

  private keyboardOf(p: Record<string, any>): FakeButton[][] {
    const markup = p['reply_markup'] as { inline_keyboard?: FakeButton[][] } | undefined;
    const rows = markup?.inline_keyboard ?? [];
    for (const button of rows.flat()) {
      const bytes = Buffer.byteLength(String(button.callback_data ?? ''), 'utf8');
      if (bytes < 1 || bytes > 64) throw new ApiError(400, 'Bad Request: BUTTON_DATA_INVALID');
      if (!button.text) throw new ApiError(400, 'Bad Request: text buttons are unallowed in the inline keyboard');
    }
    return rows.map((row) => row.map((b) => ({ text: b.text, callback_data: b.callback_data, ...(b.style ? { style: b.style } : {}) })));
  }

  private messageObject(m: FakeTelegramMessage) {
    return {
      message_id: m.messageId,
      from: this.bot,
      chat: this.chatObject(m.chatId),
      date: Math.floor(Date.now() / 1000),
      text: m.text,
      ...(m.entities.length ? { entities: m.entities } : {}),
      ...(m.threadId !== undefined ? { message_thread_id: Number(m.threadId), is_topic_message: true } : {}),
      ...(m.keyboard.length ? { reply_markup: { inline_keyboard: m.keyboard } } : {}),
      ...(m.edited ? { edit_date: Math.floor(Date.now() / 1000) } : {}),
    };
  }

  private sendMessage(p: Record<string, any>): unknown {
    if (p['chat_id'] === undefined || p['chat_id'] === '') throw new ApiError(400, 'Bad Request: chat_id is empty');
    this.failure();
    const { text, entities } = this.parseText(p);
    const keyboard = this.keyboardOf(p);
    const message: FakeTelegramMessage = {
      chatId: String(p['chat_id']),
      messageId: this.nextMessageId++,
      ...(p['message_thread_id'] !== undefined ? { threadId: String(p['message_thread_id']) } : {}),
      text,
      raw: String(p['text']),
      ...(p['parse_mode'] ? { parseMode: String(p['parse_mode']) } : {}),
      entities,
      keyboard,
      firstButtons: keyboard.flat(),
      edited: false,
    };
    this.messages.push(message);
    return this.messageObject(message);
  }

  private editMessageText(p: Record<string, any>): unknown {
    this.failure();
    const message = this.messages.find((m) => m.chatId === String(p['chat_id']) && m.messageId === Number(p['message_id']));
    if (!message) throw new ApiError(400, 'Bad Request: message to edit not found');
    const { text, entities } = this.parseText(p);
    // Without reply_markup the inline keyboard goes (as on Telegram).
    const keyboard = this.keyboardOf(p);
    if (text === message.text && JSON.stringify(keyboard) === JSON.stringify(message.keyboard) && JSON.stringify(entities) === JSON.stringify(message.entities)) {
      throw new ApiError(400, 'Bad Request: message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message');
    }
    Object.assign(message, { text, raw: String(p['text']), entities, keyboard, edited: true });
    return this.messageObject(message);
  }

  private getUpdates(p: Record<string, any>, req: IncomingMessage, res: ServerResponse): void {
    if (this.webhook) return this.reply(res, 409, { ok: false, error_code: 409, description: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first" });
    const offset = Number(p['offset'] ?? 0);
    // A positive offset confirms every update before it: they are never sent again.
    if (offset > 0) this.updates = this.updates.filter((u) => u.update_id >= offset);
    if (Array.isArray(p['allowed_updates'])) this.allowedUpdates = p['allowed_updates'] as string[];
    // A newer poll ends the one that waits, as Telegram does with two bot instances.
    if (this.waiter) {
      const old = this.waiter;
      this.waiter = undefined;
      clearTimeout(old.timer);
      this.reply(old.res, 409, { ok: false, error_code: 409, description: 'Conflict: terminated by other getUpdates request; make sure that only one bot instance is running' });
    }
    const limit = Math.min(100, Math.max(1, Number(p['limit'] ?? 100)));
    const timeout = Math.max(0, Number(p['timeout'] ?? 0));
    const waiter: Waiter = { res, offset, limit, timer: setTimeout(() => this.finishPoll([]), timeout * 1000) };
    this.waiter = waiter;
    // The client went away (an aborted poll at stop): nothing to answer.
    res.on('close', () => {
      if (this.waiter === waiter) {
        clearTimeout(waiter.timer);
        this.waiter = undefined;
      }
    });
    if (this.available(offset).length > 0 || timeout === 0) this.answerPoll(waiter);
    void req;
  }

  private available(offset: number) {
    const allowed = this.allowedUpdates;
    return this.updates.filter((u) => u.update_id >= offset && (allowed.length === 0 || allowed.some((kind) => kind in u)));
  }

  private answerPoll(waiter: Waiter): void {
    this.finishPoll(this.available(waiter.offset).slice(0, waiter.limit));
  }

  private finishPoll(result: unknown[]): void {
    const waiter = this.waiter;
    if (!waiter) return;
    this.waiter = undefined;
    clearTimeout(waiter.timer);
    this.reply(waiter.res, 200, { ok: true, result });
  }
}
