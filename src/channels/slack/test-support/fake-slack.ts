import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';

/**
 * A fake Slack on 127.0.0.1 for tests: the Web API methods the adapter calls (auth.test,
 * apps.connections.open, chat.postMessage, chat.update, chat.postEphemeral) and a Socket Mode
 * websocket that delivers events and block_actions in envelopes and waits for each envelope's ack,
 * as Slack does.
 */

export interface FakeSlackMessage {
  channel: string;
  ts: string;
  threadTs?: string;
  text: string;
  blocks: Record<string, any>[];
  /** The buttons as first posted: a stale client can still tap them. */
  firstButtons: { actionId: string; blockId: string; text: string; value: string }[];
  edited: boolean;
}

export interface FakeSlackOptions {
  botToken: string;
  appToken: string;
}

export const FAKE_BOT_USER_ID = 'UBOT0001';
const FAKE_BOT_ID = 'BBOT0001';

export function buttonsOf(blocks: Record<string, any>[]): FakeSlackMessage['firstButtons'] {
  const out: FakeSlackMessage['firstButtons'] = [];
  for (const block of blocks) {
    if (block.type !== 'actions') continue;
    for (const el of block.elements ?? []) {
      if (el.type === 'button') out.push({ actionId: el.action_id, blockId: block.block_id, text: el.text?.text ?? '', value: el.value ?? '' });
    }
  }
  return out;
}

export class FakeSlack {
  readonly messages: FakeSlackMessage[] = [];
  readonly ephemerals: { channel: string; user: string; text: string }[] = [];
  readonly calls: { method: string; args: Record<string, any> }[] = [];
  /** Answers to give to the next chat.* calls before succeeding. */
  readonly failNext: ({ status: 429; retryAfter: number } | { status: 500 } | { error: string })[] = [];
  private server: Server | undefined;
  private wss: WebSocketServer | undefined;
  private sockets = new Set<WebSocket>();
  private acks = new Map<string, () => void>();
  private port = 0;
  private tsSeq = 1_700_000_000;

  constructor(readonly options: FakeSlackOptions) {}

  get apiUrl(): string {
    return `http://127.0.0.1:${this.port}/api/`;
  }

  async listen(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.wss = new WebSocketServer({ server: this.server, path: '/link' });
    this.wss.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('message', (data) => {
        let parsed: { envelope_id?: string };
        try {
          parsed = JSON.parse(String(data)) as { envelope_id?: string };
        } catch {
          return;
        }
        if (parsed.envelope_id) this.acks.get(parsed.envelope_id)?.();
      });
      socket.send(JSON.stringify({ type: 'hello', num_connections: 1, connection_info: { app_id: 'A0001' }, debug_info: { host: 'fake' } }));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.terminate();
    await new Promise<void>((resolve) => (this.wss ? this.wss.close(() => resolve()) : resolve()));
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Open Socket Mode connections (one per started adapter). */
  get connections(): number {
    return [...this.sockets].filter((s) => s.readyState === s.OPEN).length;
  }

  messagesIn(channel: string): FakeSlackMessage[] {
    return this.messages.filter((m) => m.channel === channel);
  }

  /** Sends an envelope over the newest open socket and resolves when the app acks it. */
  async deliver(type: 'events_api' | 'interactive' | 'slash_commands', payload: Record<string, unknown>): Promise<void> {
    const socket = [...this.sockets].reverse().find((s) => s.readyState === s.OPEN);
    if (!socket) throw new Error('fake slack: no Socket Mode connection is open');
    const envelopeId = randomUUID();
    const acked = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`fake slack: envelope ${envelopeId} was not acked`)), 5000);
      this.acks.set(envelopeId, () => {
        clearTimeout(timer);
        this.acks.delete(envelopeId);
        resolve();
      });
    });
    socket.send(JSON.stringify({ envelope_id: envelopeId, type, payload, accepts_response_payload: type !== 'events_api', retry_attempt: 0, retry_reason: '' }));
    await acked;
  }

  /** A person writes in a channel or DM. */
  async userSays(channel: string, user: string, text: string, threadTs?: string): Promise<void> {
    const ts = this.nextTs();
    await this.deliver('events_api', {
      token: 'verification',
      team_id: 'T0001',
      api_app_id: 'A0001',
      type: 'event_callback',
      event_id: `Ev${ts.replace('.', '')}`,
      event_time: Math.floor(Date.now() / 1000),
      authorizations: [{ team_id: 'T0001', user_id: FAKE_BOT_USER_ID, is_bot: true }],
      event: { type: 'message', channel, user, text, ts, ...(threadTs ? { thread_ts: threadTs } : {}), channel_type: channel.startsWith('D') ? 'im' : 'channel', event_ts: ts },
    });
  }

  /** A person taps the button whose value is `value` on message `ts`, as it was first posted. */
  async userTaps(channel: string, ts: string, value: string, user: { id: string; name?: string }): Promise<void> {
    const message = this.messages.find((m) => m.channel === channel && m.ts === ts);
    const button = message?.firstButtons.find((b) => b.value === value);
    if (!message || !button) throw new Error(`fake slack: no button ${value} on ${channel}/${ts}`);
    await this.deliver('interactive', {
      type: 'block_actions',
      user: { id: user.id, username: user.name ?? user.id, name: user.name ?? user.id, team_id: 'T0001' },
      api_app_id: 'A0001',
      token: 'verification',
      container: { type: 'message', message_ts: ts, channel_id: channel, is_ephemeral: false },
      trigger_id: '1.2.3',
      team: { id: 'T0001', domain: 'fake' },
      channel: { id: channel, name: channel },
      message: { type: 'message', ts, text: message.text, user: FAKE_BOT_USER_ID, ...(message.threadTs ? { thread_ts: message.threadTs } : {}) },
      response_url: `${this.apiUrl}response`,
      actions: [{ action_id: button.actionId, block_id: button.blockId, text: { type: 'plain_text', text: button.text }, value: button.value, type: 'button', action_ts: this.nextTs() }],
    });
  }

  /** A person runs the app's slash command `command` (`/approve`) with `text` in `channel`. */
  async userRunsCommand(channel: string, user: string, command: string, text: string): Promise<void> {
    await this.deliver('slash_commands', {
      token: 'verification',
      team_id: 'T0001',
      team_domain: 'fake',
      channel_id: channel,
      channel_name: channel,
      user_id: user,
      user_name: user.toLowerCase(),
      command,
      text,
      api_app_id: 'A0001',
      response_url: `${this.apiUrl}response`,
      trigger_id: '1.2.3',
    });
  }

  private nextTs(): string {
    return `${++this.tsSeq}.000100`;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/api\//, '');
    // The Web API client posts form-encoded, with JSON-encoded blocks.
    const args: Record<string, any> = {};
    if ((req.headers['content-type'] ?? '').includes('application/json')) Object.assign(args, JSON.parse(raw || '{}'));
    else for (const [k, v] of new URLSearchParams(raw)) args[k] = k === 'blocks' ? JSON.parse(v) : v;
    this.calls.push({ method, args });
    const json = (body: Record<string, unknown>, status = 200, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    const token = (req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (method === 'apps.connections.open') {
      if (token !== this.options.appToken) return json({ ok: false, error: 'invalid_auth' });
      return json({ ok: true, url: `ws://127.0.0.1:${this.port}/link?ticket=${randomUUID()}` });
    }
    if (token !== this.options.botToken) return json({ ok: false, error: 'invalid_auth' });
    if (method === 'auth.test') {
      return json({ ok: true, url: 'https://fake.slack.com/', team: 'Fake Team', user: 'sage', team_id: 'T0001', user_id: FAKE_BOT_USER_ID, bot_id: FAKE_BOT_ID });
    }
    if (method.startsWith('chat.')) {
      const failure = this.failNext.shift();
      if (failure && 'status' in failure) {
        if (failure.status === 429) return json({ ok: false, error: 'ratelimited' }, 429, { 'retry-after': String(failure.retryAfter) });
        return json({ ok: false, error: 'internal_error' }, 500);
      }
      if (failure) return json({ ok: false, error: failure.error });
    }
    const blocks = (args.blocks ?? []) as Record<string, any>[];
    if (method === 'chat.postMessage') {
      const problem = validateBlocks(blocks);
      if (problem) return json({ ok: false, error: 'invalid_blocks', errors: [problem] });
      const ts = this.nextTs();
      const buttons = buttonsOf(blocks);
      this.messages.push({ channel: args.channel, ts, ...(args.thread_ts ? { threadTs: args.thread_ts } : {}), text: args.text ?? '', blocks, firstButtons: buttons, edited: false });
      return json({ ok: true, channel: args.channel, ts, message: { text: args.text, ts } });
    }
    if (method === 'chat.update') {
      const message = this.messages.find((m) => m.channel === args.channel && m.ts === args.ts);
      if (!message) return json({ ok: false, error: 'message_not_found' });
      const problem = validateBlocks(blocks);
      if (problem) return json({ ok: false, error: 'invalid_blocks', errors: [problem] });
      Object.assign(message, { text: args.text ?? message.text, blocks, edited: true });
      return json({ ok: true, channel: args.channel, ts: args.ts, text: args.text });
    }
    if (method === 'chat.postEphemeral') {
      this.ephemerals.push({ channel: args.channel, user: args.user, text: args.text });
      return json({ ok: true, message_ts: this.nextTs() });
    }
    return json({ ok: false, error: 'unknown_method' });
  }
}

/** The Block Kit limits the adapter must respect (Slack rejects the message otherwise). */
function validateBlocks(blocks: Record<string, any>[]): string | undefined {
  if (blocks.length > 50) return 'more than 50 blocks';
  for (const block of blocks) {
    if (block.type === 'section' && Array.from(String(block.text?.text ?? '')).length > 3000) return 'section text longer than 3000';
    if (block.type === 'actions') {
      const elements = (block.elements ?? []) as Record<string, any>[];
      if (elements.length > 25) return 'more than 25 elements in an actions block';
      const ids = new Set<string>();
      for (const el of elements) {
        if (ids.has(el.action_id)) return 'duplicate action_id';
        ids.add(el.action_id);
        if (Array.from(String(el.text?.text ?? '')).length > 75) return 'button text longer than 75';
        if (String(el.value ?? '').length > 2000) return 'button value longer than 2000';
      }
    }
  }
  return undefined;
}
