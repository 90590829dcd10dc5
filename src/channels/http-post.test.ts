import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { HttpPoster } from './http-post.js';

let server: Server | undefined;

async function peer(handle: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
}

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe('HttpPoster', () => {
  test('posts the body with its headers and a content-length; a 429 brings its retry-after in ms', async () => {
    const seen: Array<{ body: string; signature: unknown; length: unknown }> = [];
    const url = await peer((req, res, body) => {
      seen.push({ body, signature: req.headers['x-sig'], length: req.headers['content-length'] });
      if (seen.length === 1) res.writeHead(200).end('{}');
      else res.writeHead(429, { 'retry-after': '3' }).end();
    });
    const poster = new HttpPoster(url);
    expect(await poster.post('{"text":"héllo"}', { 'x-sig': 'abc' })).toEqual({ status: 200 });
    expect(await poster.post('{}', {})).toEqual({ status: 429, retryAfterMs: 3000 });
    expect(seen[0]).toEqual({ body: '{"text":"héllo"}', signature: 'abc', length: String(Buffer.byteLength('{"text":"héllo"}')) });
    poster.close();
  });

  test('close() lets a post in flight finish (cut, it could reach the platform and be posted again by a retry)', async () => {
    let received = 0;
    let answer: (() => void) | undefined;
    const url = await peer((_req, res) => {
      received++;
      answer = () => res.writeHead(200).end();
    });
    const poster = new HttpPoster(url);
    const pending = poster.post('{}', {});
    while (!answer) await new Promise((resolve) => setTimeout(resolve, 5));
    poster.close();
    answer();
    expect(await pending).toEqual({ status: 200 });
    expect(received).toBe(1);
  });

  test('a kept-alive connection the peer closed is replaced at once, and the post arrives once', async () => {
    let received = 0;
    const url = await peer((_req, res) => {
      received++;
      res.writeHead(200).end();
    });
    const poster = new HttpPoster(url);
    await poster.post('{}', {});
    // The peer drops its idle connection (its keep-alive timeout) just as the poster reuses it.
    server!.closeIdleConnections();
    expect(await poster.post('{}', {})).toEqual({ status: 200 });
    expect(received).toBe(2);
    poster.close();
  });

  test('a peer that does not answer in time is a transport failure (the retry loop treats the platform as down)', async () => {
    const url = await peer(() => {});
    const poster = new HttpPoster(url, 50);
    await expect(poster.post('{}', {})).rejects.toThrow(/no answer from http:\/\/127\.0\.0\.1:\d+ in 0\.05 s/);
    poster.close();
  });
});
