import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookAdapter, signBody } from '../webhook-adapter.js';
import type { ChannelAdapter, ChannelCommonConfig } from '../../adapter.js';
import type { ChannelTestHarness, ChatUser, SeenMessage } from '../../test-harness.js';

const DEFAULT_SECRET = 'test-webhook-secret';
const silent = { info() {}, warn() {}, error() {}, debug() {} };

interface Posted {
  messageId: string;
  chatId: string;
  text: string;
  edit?: boolean;
  approval?: { id: string; options: { value: string; label: string; command: string }[] };
}

/**
 * The other end of the generic webhook on 127.0.0.1: it receives Sage's signed POSTs (and refuses
 * a bad signature, so a test would see it), keeps each chat's messages with edits applied, and
 * plays people by POSTing signed bodies to the adapter's inbound route. `secret` and `makeAdapter`'s
 * `name` make one of several instances (`webhook:a`, each with its own secret and route).
 */
export async function startFakeWebhookPeer(options: { secret?: string } = {}): Promise<ChannelTestHarness & { url: string; rejected: number; secret: string; signedRequest(path: string, body: Record<string, unknown>): Request; failNext(status: number, times: number, retryAfter?: number): void }> {
  const SECRET = options.secret ?? DEFAULT_SECRET;
  const chats = new Map<string, (SeenMessage & { approval?: Posted['approval'] })[]>();
  /** Every approval ever sent, by short id: a stale client can still tap its buttons. */
  const sent = new Map<string, { chatId: string; messageId: string; options: { value: string; command: string }[] }>();
  let adapter: ChannelAdapter | undefined;
  let rejected = 0;
  let failures: { status: number; times: number; retryAfter?: number } | undefined;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (req.headers['x-sage-signature'] !== signBody(SECRET, raw)) {
        rejected++;
        res.writeHead(401).end();
        return;
      }
      if (failures && failures.times > 0) {
        failures.times--;
        res.writeHead(failures.status, failures.retryAfter !== undefined ? { 'retry-after': String(failures.retryAfter) } : {}).end();
        return;
      }
      const body = JSON.parse(raw.toString('utf8')) as Posted;
      const list = chats.get(body.chatId) ?? [];
      chats.set(body.chatId, list);
      const buttons = (body.approval?.options ?? []).map((o) => ({ label: o.label, command: o.command }));
      const existing = list.find((m) => m.messageId === body.messageId);
      if (body.edit && existing) Object.assign(existing, { text: body.text, buttons, edited: true });
      else list.push({ messageId: body.messageId, text: body.text, buttons, edited: false });
      if (body.approval && !body.edit) sent.set(body.approval.id, { chatId: body.chatId, messageId: body.messageId, options: body.approval.options });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;

  /** A person's message as the relay signs it for `path`: what an eavesdropper on that leg captures. */
  const signedRequest = (path: string, body: Record<string, unknown>): Request => {
    const raw = JSON.stringify(body);
    return new Request(`http://sage${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-sage-signature': signBody(SECRET, raw) }, body: raw });
  };

  const post = async (body: Record<string, unknown>) => {
    if (!adapter) throw new Error('no adapter made yet');
    const route = adapter.routes[0]!;
    const res = await route.handle(signedRequest(route.path, body));
    if (res.status !== 200) throw new Error(`inbound POST answered ${res.status}`);
  };

  return {
    url,
    secret: SECRET,
    signedRequest,
    get rejected() {
      return rejected;
    },
    failNext(status, times, retryAfter) {
      failures = { status, times, ...(retryAfter !== undefined ? { retryAfter } : {}) };
    },
    makeAdapter(common: ChannelCommonConfig, name?: string) {
      adapter = createWebhookAdapter({ ...common, secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: url }, { env: { SAGE_WEBHOOK_SECRET: SECRET }, log: silent, ...(name ? { name } : {}) }, { retry: { baseDelayMs: 5 } });
      return adapter;
    },
    async userSays(chatId: string, text: string, from: ChatUser) {
      await post({ chatId, text, senderId: from.senderId, ...(from.senderName ? { senderName: from.senderName } : {}) });
    },
    async userTaps(shortId: string, option: string, from: ChatUser) {
      const message = sent.get(shortId);
      const button = message?.options.find((o) => o.value === option);
      if (!message || !button) throw new Error(`no message ever carried a "${option}" button for ${shortId}`);
      await post({ chatId: message.chatId, text: button.command, senderId: from.senderId, messageId: message.messageId, ...(from.senderName ? { senderName: from.senderName } : {}) });
    },
    lastMessages(chatId: string) {
      return (chats.get(chatId) ?? []).map(({ messageId, text, buttons, edited }) => ({ messageId, text, buttons: [...buttons], edited }));
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
