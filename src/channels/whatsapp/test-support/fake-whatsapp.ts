import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A fake WhatsApp Cloud API on 127.0.0.1 for tests: the Graph API calls the adapter makes
 * (`GET /<phone-number-id>`, `POST /<phone-number-id>/messages`), recorded per chat, plus helpers
 * that build the signed webhook deliveries Meta would POST to the adapter's route.
 */

export interface FakeWhatsappMessage {
  messageId: string;
  to: string;
  type: 'text' | 'interactive';
  text: string;
  /** The reply buttons as sent (WhatsApp never removes them). */
  buttons: { id: string; title: string }[];
  /** The message this one quotes (`context.message_id`), as `edit` does. */
  contextId?: string;
  body: Record<string, unknown>;
}

export interface FakeWhatsappOptions {
  phoneNumberId: string;
  token: string;
  appSecret: string;
}

export class FakeWhatsapp {
  readonly messages: FakeWhatsappMessage[] = [];
  /** Every request seen, for asserting on the wire (method, path, body). */
  readonly requests: { method: string; path: string; body: unknown }[] = [];
  /** Answers to give to the next POSTs before succeeding: a status with optional retry-after and Graph error code. */
  readonly failNext: { status: number; retryAfter?: number; code?: number }[] = [];
  private server: Server | undefined;
  private seq = 0;
  private port = 0;

  constructor(readonly options: FakeWhatsappOptions) {}

  get root(): string {
    return `http://127.0.0.1:${this.port}/v21.0`;
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
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Messages sent to `to`, oldest first. */
  messagesTo(to: string): FakeWhatsappMessage[] {
    return this.messages.filter((m) => m.to === to);
  }

  /** A webhook body carrying one inbound message, as Meta sends it. */
  inbound(from: string, message: Record<string, unknown>, name?: string): Record<string, unknown> {
    const id = `wamid.in${++this.seq}`;
    return {
      object: 'whatsapp_business_account',
      entry: [
        {
          id: 'WABA_ID',
          changes: [
            {
              field: 'messages',
              value: {
                messaging_product: 'whatsapp',
                metadata: { display_phone_number: '15550001111', phone_number_id: this.options.phoneNumberId },
                ...(name !== undefined ? { contacts: [{ wa_id: from, profile: { name } }] } : {}),
                messages: [{ id, from, timestamp: String(Math.floor(Date.now() / 1000)), ...message }],
              },
            },
          ],
        },
      ],
    };
  }

  /** A typed text message from `from`. */
  textFrom(from: string, text: string, name?: string): Record<string, unknown> {
    return this.inbound(from, { type: 'text', text: { body: text } }, name);
  }

  /** A tap on reply button `buttonId` of message `messageId`. */
  tapFrom(from: string, messageId: string, buttonId: string, title: string, name?: string): Record<string, unknown> {
    return this.inbound(from, { type: 'interactive', context: { from: '15550001111', id: messageId }, interactive: { type: 'button_reply', button_reply: { id: buttonId, title } } }, name);
  }

  /** The request Meta would POST to `url` for `body`, signed with the app secret (or with `secret` to forge one). */
  signedRequest(url: string, body: unknown, secret = this.options.appSecret): Request {
    const raw = JSON.stringify(body);
    const signature = 'sha256=' + createHmac('sha256', secret).update(raw).digest('hex');
    return new Request(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature }, body: raw });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    let body: unknown;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      body = raw;
    }
    this.requests.push({ method: req.method ?? '', path, body });
    const reply = (status: number, json: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(json));
    };
    if (req.headers.authorization !== `Bearer ${this.options.token}`) {
      reply(401, { error: { message: 'Invalid OAuth access token.', type: 'OAuthException', code: 190 } });
      return;
    }
    const phone = this.options.phoneNumberId;
    if (req.method === 'GET' && path === `/v21.0/${phone}`) {
      reply(200, { display_phone_number: '+1 555-000-1111', verified_name: 'Sage Test', id: phone });
      return;
    }
    if (req.method === 'POST' && path === `/v21.0/${phone}/messages`) {
      const failure = this.failNext.shift();
      if (failure) {
        reply(failure.status, { error: { message: 'fake failure', code: failure.code ?? 1 } }, failure.retryAfter !== undefined ? { 'retry-after': String(failure.retryAfter) } : {});
        return;
      }
      const message = this.record(body);
      if (typeof message === 'string') {
        reply(400, { error: { message, code: 100 } });
        return;
      }
      reply(200, { messaging_product: 'whatsapp', contacts: [{ input: message.to, wa_id: message.to }], messages: [{ id: message.messageId }] });
      return;
    }
    reply(404, { error: { message: `unknown path ${path}`, code: 100 } });
  }

  /** Validates a send the way the Cloud API does (the limits we rely on) and stores it. */
  private record(body: unknown): FakeWhatsappMessage | string {
    const b = body as Record<string, any>;
    if (b?.messaging_product !== 'whatsapp' || typeof b.to !== 'string') return 'messaging_product and to are required';
    const contextId = typeof b.context?.message_id === 'string' ? (b.context.message_id as string) : undefined;
    const messageId = `wamid.out${++this.seq}`;
    if (b.type === 'text') {
      const text = String(b.text?.body ?? '');
      if (Array.from(text).length > 4096) return 'text body longer than 4096';
      const m: FakeWhatsappMessage = { messageId, to: b.to, type: 'text', text, buttons: [], ...(contextId ? { contextId } : {}), body: b };
      this.messages.push(m);
      return m;
    }
    if (b.type === 'interactive' && b.interactive?.type === 'button') {
      const text = String(b.interactive.body?.text ?? '');
      const buttons = (b.interactive.action?.buttons ?? []) as { reply: { id: string; title: string } }[];
      if (Array.from(text).length > 1024) return 'interactive body longer than 1024';
      if (buttons.length < 1 || buttons.length > 3) return 'an interactive button message has 1 to 3 buttons';
      const titles = new Set<string>();
      for (const button of buttons) {
        if (Array.from(button.reply.title).length > 20) return `button title longer than 20: ${button.reply.title}`;
        if (button.reply.id.length > 256) return 'button id longer than 256';
        if (titles.has(button.reply.title)) return 'button titles must be unique';
        titles.add(button.reply.title);
      }
      const m: FakeWhatsappMessage = {
        messageId,
        to: b.to,
        type: 'interactive',
        text,
        buttons: buttons.map((x) => ({ id: x.reply.id, title: x.reply.title })),
        ...(contextId ? { contextId } : {}),
        body: b,
      };
      this.messages.push(m);
      return m;
    }
    return `unsupported message type ${String(b.type)}`;
  }
}
