import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyWebhookSignature, webhookSignatureHeaders } from '../signature.js';
import { createWebhookAdapter } from '../webhook-adapter.js';
import type { ChannelAdapter, ChannelCommonConfig } from '../../adapter.js';
import { systemChannelClock, type ChannelClock } from '../../seen-ids.js';
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
 * The other end of the generic webhook on 127.0.0.1, checking Sage's POSTs as a relay must: the
 * signature over "<X-Sage-Timestamp>.<body>", the timestamp within 300 s of its clock, and no
 * signature taken twice (a refusal is counted in `rejected`, so a test would see it). It keeps each
 * chat's messages with edits applied, and plays people by POSTing freshly signed bodies to the
 * adapter's inbound route. `secret` and `makeAdapter`'s `name` make one of several instances
 * (`webhook:a`, each with its own secret and route); `clock` is the time it signs and checks with
 * (the adapter it makes gets the same one).
 */
export async function startFakeWebhookPeer(options: { secret?: string; clock?: ChannelClock } = {}): Promise<ChannelTestHarness & { url: string; rejected: number; secret: string; signedRequest(path: string, body: Record<string, unknown>): Request; failNext(status: number, times: number, retryAfter?: number): void }> {
  const SECRET = options.secret ?? DEFAULT_SECRET;
  const clock = options.clock ?? systemChannelClock;
  /** Signatures of the posts it took (a relay keeps them for the 300 s window; a test peer lives shorter). */
  const taken = new Set<string>();
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
      const header = (name: string) => (typeof req.headers[name] === 'string' ? (req.headers[name] as string) : null);
      const check = verifyWebhookSignature(SECRET, { timestamp: header('x-sage-timestamp'), signature: header('x-sage-signature') }, raw, clock.now());
      if (!check.ok || taken.has(check.digest)) {
        rejected++;
        res.writeHead(check.ok ? 409 : 401).end();
        return;
      }
      // Not taken when it fails here: Sage's retry of it (in the same second, the same signature) is welcome.
      if (failures && failures.times > 0) {
        failures.times--;
        res.writeHead(failures.status, failures.retryAfter !== undefined ? { 'retry-after': String(failures.retryAfter) } : {}).end();
        return;
      }
      taken.add(check.digest);
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
    // Its own delivery id, as a relay sends: the same text twice in one second is two requests.
    const raw = JSON.stringify({ deliveryId: randomUUID(), ...body });
    return new Request(`http://sage${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...webhookSignatureHeaders(SECRET, raw, clock.now()) }, body: raw });
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
      adapter = createWebhookAdapter({ ...common, secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: url }, { env: { SAGE_WEBHOOK_SECRET: SECRET }, log: silent, clock, ...(name ? { name } : {}) }, { retry: { baseDelayMs: 5 } });
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
