// `sage serve --channels FILE`: the chat channels run inside the server process (build first: this
// drives dist/cli/bin.js). Over the generic webhook: a signed message starts a run, its approval is
// posted to the outbound URL with its buttons, a signed `/approve <id> once` runs the tool, and the
// agent's answer is posted; an unsigned request is refused with 401 and changes nothing.
import { spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bin, runCli } from '../support/cli.js';

const SECRET = 'serve-channels-secret';
/** The relay's side of the webhook signature: a fresh timestamp per request, signed with the body. */
const signed = (secret: string, body: string): Record<string, string> => {
  const timestamp = String(Math.floor(Date.now() / 1000));
  return { 'x-sage-timestamp': timestamp, 'x-sage-signature': `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}` };
};
/** Sage's posts: signed "<X-Sage-Timestamp>.<body>" with `secret`, within 300 s of this clock. */
const signedBy = (secret: string, headers: Record<string, string | string[] | undefined>, body: string): boolean => {
  const timestamp = headers['x-sage-timestamp'];
  if (typeof timestamp !== 'string' || Math.abs(Date.now() / 1000 - Number(timestamp)) > 300) return false;
  return headers['x-sage-signature'] === `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
};
let dir: string;
let peer: Server;
const posts: Array<{ chatId: string; text: string; approval?: { id: string; options: Array<{ command: string }> } }> = [];
const instancePosts: Array<{ chatId: string; text: string; path: string; signedBy: 'a' | 'b' }> = [];
let sage: ChildProcess | undefined;
let url = '';

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sage-serve-channels-'));
  peer = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      if (signedBy(SECRET, req.headers, body)) posts.push(JSON.parse(body) as (typeof posts)[number]);
      // The instances test's peers (/a, /b): which instance's secret signed the post.
      const instance = (['a', 'b'] as const).find((k) => signedBy(`secret-of-${k}`, req.headers, body));
      if (instance) instancePosts.push({ ...(JSON.parse(body) as { chatId: string; text: string }), path: req.url ?? '', signedBy: instance });
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => peer.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  sage?.kill('SIGTERM');
  await new Promise<void>((resolve) => peer.close(() => resolve()));
  rmSync(dir, { recursive: true, force: true });
});

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('sage serve with chat channels', { timeout: 60_000 }, () => {
  it('a bad channels config stops the start with the field named', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET' } }));
    const result = await runCli(['serve', '--port', '0', '--db', join(dir, 'bad.db'), '--channels', bad], { cwd: dir, env: { SAGE_HOME: dir, SAGE_WEBHOOK_SECRET: SECRET } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('channels.webhook.outboundUrl');
  });

  it('a signed webhook message starts a run, its approval is answered from the chat, and the answer is posted back', async () => {
    const script = join(dir, 'script.json');
    const made = join(dir, 'from-chat.txt');
    writeFileSync(script, JSON.stringify({ turns: [{ toolCalls: [{ name: 'Bash', input: { command: `touch ${made}` } }] }, { text: 'made it from chat' }] }));
    const config = join(dir, 'channels.json');
    const outbound = `http://127.0.0.1:${(peer.address() as AddressInfo).port}/hook`;
    writeFileSync(config, JSON.stringify({ channels: { webhook: { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: outbound, approvers: ['alice'] } } }));
    sage = spawn(process.execPath, [bin, 'serve', '--port', '0', '--db', join(dir, 'sage.db'), '--root', dir, '--allow-scripted', '--model', `scripted:${script}`, '--channels', config], {
      cwd: dir,
      env: { ...process.env, SAGE_HOME: dir, SAGE_WEBHOOK_SECRET: SECRET, SAGE_TOKENS: '', SAGE_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    sage.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    sage.stderr!.on('data', () => {});
    url = await until('the server to listen', () => /serving (http:\/\/\S+)/.exec(out)?.[1]);
    expect(out).toContain('channel webhook: inbound POST /channels/webhook');
    expect(out).toContain(`  inbound  POST ${url}/channels/webhook\n  outbound ${outbound}\n`);

    const send = (body: object, sign = true) => {
      const raw = JSON.stringify(body);
      return fetch(`${url}/channels/webhook`, { method: 'POST', headers: { 'content-type': 'application/json', ...(sign ? signed(SECRET, raw) : {}) }, body: raw });
    };
    const unsigned = await send({ chatId: 'c1', senderId: 'alice', text: 'hello' }, false);
    expect(unsigned.status).toBe(401);

    expect((await send({ chatId: 'c1', senderId: 'alice', text: 'please make the file' })).status).toBe(200);
    const prompt = await until('the approval in the chat', () => posts.find((p) => p.approval));
    const once = prompt.approval!.options.find((o) => o.command.endsWith(' once'))!.command;
    const answer = JSON.stringify({ chatId: 'c1', senderId: 'alice', text: once });
    const answerHeaders = { 'content-type': 'application/json', ...signed(SECRET, answer) };
    expect((await fetch(`${url}/channels/webhook`, { method: 'POST', headers: answerHeaders, body: answer })).status).toBe(200);
    await until('the tool to run', () => (existsSync(made) ? true : undefined));
    // The same signed request again (a capture replayed): refused, and said why.
    const replayed = await fetch(`${url}/channels/webhook`, { method: 'POST', headers: answerHeaders, body: answer });
    expect(replayed.status).toBe(409);
    expect(((await replayed.json()) as { error: { code: string } }).error.code).toBe('replayed');
    await until("the agent's answer in the chat", () => posts.find((p) => p.text.includes('made it from chat')));
  });

  it('several instances of one kind: a bad key stops the start naming it; webhook:a and webhook:b each have their route and secret', async () => {
    const badKey = join(dir, 'bad-key.json');
    writeFileSync(badKey, JSON.stringify({ channels: { 'webhook:': { secretEnv: 'SAGE_WEBHOOK_SECRET', outboundUrl: 'http://127.0.0.1:9/hook' } } }));
    const refused = await runCli(['serve', '--port', '0', '--db', join(dir, 'bad-key.db'), '--channels', badKey], { cwd: dir, env: { SAGE_HOME: dir, SAGE_WEBHOOK_SECRET: SECRET } });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('channels["webhook:"]: the instance name after "webhook:"');

    const secrets = { a: 'secret-of-a', b: 'secret-of-b' };
    const outbound = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
    const config = join(dir, 'instances.json');
    writeFileSync(config, JSON.stringify({ channels: { 'webhook:a': { secretEnv: 'SECRET_A', outboundUrl: `${outbound}/a`, approvers: ['alice'] }, 'webhook:b': { secretEnv: 'SECRET_B', outboundUrl: `${outbound}/b`, approvers: ['bob'] } } }));
    const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--db', join(dir, 'instances.db'), '--root', dir, '--channels', config], {
      cwd: dir,
      env: { ...process.env, SAGE_HOME: dir, SECRET_A: secrets.a, SECRET_B: secrets.b, SAGE_TOKENS: '', SAGE_DATABASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
      child.stderr!.on('data', () => {});
      const base = await until('the server to listen', () => /serving (http:\/\/\S+)/.exec(out)?.[1]);
      await until('both channels to say what they connected to', () => (out.includes('channel webhook:b: ') ? true : undefined));
      expect(out).toContain('channel webhook:a: inbound POST /channels/webhook/a, outbound');
      expect(out).toContain('channel webhook:b: inbound POST /channels/webhook/b, outbound');
      const send = (path: string, secret: string, body: object) => {
        const raw = JSON.stringify(body);
        return fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...signed(secret, raw) }, body: raw });
      };
      // A's secret on B's route: refused. The bare route is not configured here.
      expect((await send('/channels/webhook/b', secrets.a, { chatId: 'c9', senderId: 'alice', text: '/status' })).status).toBe(401);
      expect((await send('/channels/webhook', secrets.a, { chatId: 'c9', senderId: 'alice', text: '/status' })).status).not.toBe(200);
      // Each instance answers on its own route, and its reply is signed with its own secret.
      expect((await send('/channels/webhook/a', secrets.a, { chatId: 'c9', senderId: 'alice', text: '/status' })).status).toBe(200);
      expect((await send('/channels/webhook/b', secrets.b, { chatId: 'c9', senderId: 'bob', text: '/status' })).status).toBe(200);
      const replies = await until('both replies', () => {
        const got = instancePosts.filter((p) => p.chatId === 'c9');
        return got.length >= 2 ? got : undefined;
      });
      expect(replies.map((p) => [p.path, p.signedBy, p.text.startsWith('No run in this chat')]).sort()).toEqual([
        ['/a', 'a', true],
        ['/b', 'b', true],
      ]);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
