import { createCipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { feishuSignature } from '../crypto.js';

/**
 * A fake Feishu/Lark Open API on 127.0.0.1 for tests: tenant token, bot info, send, reply-in-thread
 * and PATCH of cards, recorded per chat; plus builders for the encrypted, signed event deliveries
 * Feishu POSTs to the webhook endpoint. The long connection speaks protobuf frames and is not faked:
 * its endpoint here refuses, which is what an app without "persistent connection" gets.
 */

export interface FakeFeishuMessage {
  messageId: string;
  chatId: string;
  /** The root message when sent as a reply in a thread. */
  replyTo?: string;
  card: Record<string, any>;
  text: string;
  /** Buttons as first sent (a stale client can still tap them): label and callback command. */
  firstButtons: { label: string; command: string }[];
  buttons: { label: string; command: string }[];
  edited: boolean;
}

export interface FakeFeishuOptions {
  appId: string;
  appSecret: string;
  verificationToken: string;
  encryptKey?: string;
}

export function cardText(card: Record<string, any>): string {
  return ((card.elements ?? []) as Record<string, any>[])
    .filter((e) => e.tag === 'div')
    .map((e) => String(e.text?.content ?? ''))
    .join('\n');
}

export function cardButtons(card: Record<string, any>): { label: string; command: string }[] {
  const out: { label: string; command: string }[] = [];
  for (const element of (card.elements ?? []) as Record<string, any>[]) {
    if (element.tag !== 'action') continue;
    for (const a of element.actions ?? []) if (a.tag === 'button') out.push({ label: String(a.text?.content ?? ''), command: String(a.value?.cmd ?? '') });
  }
  return out;
}

export class FakeFeishu {
  readonly messages: FakeFeishuMessage[] = [];
  readonly requests: { method: string; path: string; body: unknown }[] = [];
  /** Answers for the next im/v1 calls before succeeding. */
  readonly failNext: ({ status: number; code: number; reset?: number })[] = [];
  private server: Server | undefined;
  private port = 0;
  private seq = 0;
  private readonly tenantToken = `t-${randomUUID()}`;

  constructor(readonly options: FakeFeishuOptions) {}

  get domain(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async listen(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  }

  messagesIn(chatId: string): FakeFeishuMessage[] {
    return this.messages.filter((m) => m.chatId === chatId);
  }

  /** A v2 `im.message.receive_v1` envelope: `openId` writes `text` in `chatId`. */
  messageEvent(chatId: string, openId: string, text: string, extra: { threadRoot?: string; mention?: boolean } = {}): Record<string, unknown> {
    const messageId = `om_in${++this.seq}`;
    return {
      schema: '2.0',
      header: { event_id: randomUUID(), event_type: 'im.message.receive_v1', create_time: String(Date.now()), token: this.options.verificationToken, app_id: this.options.appId, tenant_key: 'tk' },
      event: {
        sender: { sender_id: { open_id: openId, user_id: 'u1', union_id: 'on_1' }, sender_type: 'user', tenant_key: 'tk' },
        message: {
          message_id: messageId,
          ...(extra.threadRoot ? { root_id: extra.threadRoot, parent_id: extra.threadRoot, thread_id: `omt_${extra.threadRoot}` } : {}),
          chat_id: chatId,
          chat_type: 'group',
          message_type: 'text',
          content: JSON.stringify({ text: extra.mention ? `@_user_1 ${text}` : text }),
          ...(extra.mention ? { mentions: [{ key: '@_user_1', id: { open_id: 'ou_bot' }, name: 'Sage' }] } : {}),
        },
      },
    };
  }

  /** A v2 `card.action.trigger` envelope: `openId` taps the button carrying `command` on `messageId`, as first sent. */
  tapEvent(messageId: string, command: string, openId: string): Record<string, unknown> {
    const message = this.messages.find((m) => m.messageId === messageId);
    if (!message || !message.firstButtons.some((b) => b.command === command)) throw new Error(`fake feishu: no button ${command} on ${messageId}`);
    return {
      schema: '2.0',
      header: { event_id: randomUUID(), event_type: 'card.action.trigger', create_time: String(Date.now()), token: this.options.verificationToken, app_id: this.options.appId, tenant_key: 'tk' },
      event: {
        operator: { tenant_key: 'tk', open_id: openId, user_id: 'u2' },
        token: 'c-card-token',
        action: { value: { cmd: command }, tag: 'button' },
        host: 'im_message',
        context: { open_message_id: messageId, open_chat_id: message.chatId },
      },
    };
  }

  /** The POST Feishu would make to `url`: encrypted and signed when the fake has an encrypt key (signed at `timestampMs`, default now). */
  eventRequest(url: string, envelope: Record<string, unknown>, forge: { encryptKey?: string; signature?: string; timestampMs?: number } = {}): Request {
    const key = forge.encryptKey ?? this.options.encryptKey;
    const raw = key === undefined ? JSON.stringify(envelope) : JSON.stringify({ encrypt: encryptFeishu(JSON.stringify(envelope), key) });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (key !== undefined) {
      const timestamp = String(Math.floor((forge.timestampMs ?? Date.now()) / 1000));
      const nonce = randomUUID();
      headers['x-lark-request-timestamp'] = timestamp;
      headers['x-lark-request-nonce'] = nonce;
      headers['x-lark-signature'] = forge.signature ?? feishuSignature(timestamp, nonce, key, raw);
    }
    return new Request(url, { method: 'POST', headers, body: raw });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://x');
    let body: Record<string, any> = {};
    try {
      body = raw ? (JSON.parse(raw) as Record<string, any>) : {};
    } catch {
      /* keep {} */
    }
    this.requests.push({ method: req.method ?? '', path: url.pathname, body });
    const json = (payload: unknown, status = 200, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    if (url.pathname === '/open-apis/auth/v3/tenant_access_token/internal') {
      if (body.app_id !== this.options.appId || body.app_secret !== this.options.appSecret) return json({ code: 10014, msg: 'app secret invalid' });
      return json({ code: 0, msg: 'ok', tenant_access_token: this.tenantToken, expire: 7200 });
    }
    if (url.pathname === '/callback/ws/endpoint') return json({ code: 1000040343, msg: 'persistent connection is not enabled for this app', data: {} });
    if (req.headers.authorization !== `Bearer ${this.tenantToken}`) return json({ code: 99991663, msg: 'Invalid access token for authorization' }, 400);
    if (url.pathname === '/open-apis/bot/v3/info') return json({ code: 0, msg: 'ok', bot: { app_name: 'Sage Bot', open_id: 'ou_bot', activate_status: 2 } });
    if (url.pathname.startsWith('/open-apis/im/v1/messages')) {
      const failure = this.failNext.shift();
      if (failure) return json({ code: failure.code, msg: 'fake failure' }, failure.status, failure.reset !== undefined ? { 'x-ogw-ratelimit-reset': String(failure.reset) } : {});
    }
    const reply = url.pathname.match(/^\/open-apis\/im\/v1\/messages\/([^/]+)\/reply$/);
    const one = url.pathname.match(/^\/open-apis\/im\/v1\/messages\/([^/]+)$/);
    if (req.method === 'POST' && (url.pathname === '/open-apis/im/v1/messages' || reply)) {
      let chatId: string;
      if (reply) {
        const root = this.messages.find((m) => m.messageId === reply[1]) ?? undefined;
        chatId = root?.chatId ?? `chat_of_${reply[1]}`;
      } else {
        if (url.searchParams.get('receive_id_type') !== 'chat_id') return json({ code: 99992402, msg: 'receive_id_type is required' }, 400);
        chatId = String(body.receive_id);
      }
      if (body.msg_type !== 'interactive') return json({ code: 230001, msg: 'this fake only records cards' }, 400);
      const card = JSON.parse(String(body.content)) as Record<string, any>;
      const buttons = cardButtons(card);
      const message: FakeFeishuMessage = {
        messageId: `om_out${++this.seq}`,
        chatId,
        ...(reply ? { replyTo: reply[1] } : {}),
        card,
        text: cardText(card),
        firstButtons: buttons,
        buttons,
        edited: false,
      };
      this.messages.push(message);
      return json({ code: 0, msg: 'success', data: { message_id: message.messageId, chat_id: chatId, msg_type: 'interactive' } });
    }
    if (req.method === 'PATCH' && one) {
      const message = this.messages.find((m) => m.messageId === one[1]);
      if (!message) return json({ code: 230011, msg: 'message not found' }, 400);
      if (message.card.config?.update_multi !== true) return json({ code: 230099, msg: 'card is not shared (update_multi)' }, 400);
      const card = JSON.parse(String(body.content)) as Record<string, any>;
      Object.assign(message, { card, text: cardText(card), buttons: cardButtons(card), edited: true });
      return json({ code: 0, msg: 'success', data: {} });
    }
    return json({ code: 404, msg: `unknown ${req.method} ${url.pathname}` }, 404);
  }
}

/** Feishu's event encryption (AES-256-CBC, key SHA-256 of the encrypt key, IV first), for the fake's deliveries. */
export function encryptFeishu(plain: string, encryptKey: string): string {
  const key = createHash('sha256').update(encryptKey).digest();
  const iv = randomBytes(16);
  const cipher = createCipheriv('aes-256-cbc', key, iv);
  return Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final()]).toString('base64');
}
