import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InboundMessage } from '../adapter.js';
import { createWebhookAdapter } from './webhook-adapter.js';

/**
 * The relay example in PLATFORMS.md, run as written against the adapter: what it signs, Sage
 * takes; what Sage signs, it takes once, and it refuses the same post again (409) and a post
 * signed more than 300 s from its clock (401).
 */
const SECRET = 'relay-example-secret';
const silent = { info() {}, warn() {}, error() {}, debug() {} };

interface RelayExample {
  signForSage(secret: string, body: string): Record<string, string>;
  makeSageVerifier(secret: string): (headers: IncomingHttpHeaders, raw: Buffer) => number;
}

describe('the relay example in PLATFORMS.md', () => {
  let dir: string;
  let relay: RelayExample;
  let server: Server;
  let url: string;
  const received: { headers: IncomingHttpHeaders; raw: Buffer; status: number }[] = [];

  beforeAll(async () => {
    const doc = readFileSync(new URL('../PLATFORMS.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Generic webhook'));
    const code = /```js\n([\s\S]*?)```/.exec(section)?.[1];
    if (!code) throw new Error('PLATFORMS.md has no ```js block under "## Generic webhook"');
    dir = mkdtempSync(join(tmpdir(), 'sage-relay-example-'));
    writeFileSync(join(dir, 'relay.mjs'), code);
    relay = (await import(pathToFileURL(join(dir, 'relay.mjs')).href)) as RelayExample;
    const verify = relay.makeSageVerifier(SECRET);
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const raw = Buffer.concat(chunks);
        const status = verify(req.headers, raw);
        received.push({ headers: req.headers, raw, status });
        res.writeHead(status).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  const adapter = (clock = { now: () => Date.now() }) =>
    createWebhookAdapter({ approvers: [], askFallback: 'deny', approvalTimeoutSeconds: 1800, alwaysWindowSeconds: 300, secretEnv: 'S', outboundUrl: url }, { env: { S: SECRET }, log: silent, clock }, { retry: { baseDelayMs: 1, attempts: 1 } });

  it("takes Sage's signed post once; the same post again is 409; a post signed 301 s off its clock is 401", async () => {
    await adapter().send({ chatId: 'c1', text: 'hello from Sage' });
    const taken = received.at(-1)!;
    expect(taken.status).toBe(200);
    expect(JSON.parse(taken.raw.toString())).toMatchObject({ chatId: 'c1', text: 'hello from Sage', deliveryId: expect.any(String) });

    const again = await fetch(url, { method: 'POST', headers: { 'x-sage-timestamp': String(taken.headers['x-sage-timestamp']), 'x-sage-signature': String(taken.headers['x-sage-signature']) }, body: taken.raw });
    expect(again.status).toBe(409);

    await expect(adapter({ now: () => Date.now() - 301_000 }).send({ chatId: 'c1', text: 'signed too long ago' })).rejects.toThrow(/answered 401/);
    expect(received.at(-1)!.status).toBe(401);
  });

  it('what it signs for Sage is taken by the inbound route; the same request again is refused (409)', async () => {
    const a = adapter();
    const delivered: InboundMessage[] = [];
    await a.start(async (m) => (delivered.push(m), { handled: 'agent' }));
    const body = JSON.stringify({ chatId: 'c1', senderId: 'alice', text: 'yes' });
    const headers = relay.signForSage(SECRET, body);
    const post = () => a.routes[0]!.handle(new Request('http://sage/channels/webhook', { method: 'POST', headers, body }));
    expect((await post()).status).toBe(200);
    expect((await post()).status).toBe(409);
    expect(delivered.map((m) => m.text)).toEqual(['yes']);
    await a.stop();
  });
});
