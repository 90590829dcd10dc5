import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { loopbackRequestProblem } from './auth.js';
import { enc, eventually, startAskingRun, startHarness, type Harness } from './test-support/harness.js';

/** A raw HTTP request, so Host and Origin are exactly what an attacker's browser would send. */
function raw(url: string, method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: any; headers: Record<string, unknown> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, method, path, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text ? JSON.parse(text) : undefined, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('auth off (loopback): Host and Origin (issue 10 item 5)', () => {
  let h: Harness;
  let port: number;
  beforeAll(async () => {
    h = await startHarness({ auth: false });
    port = h.server.port;
  });
  afterAll(async () => {
    await h.close();
  });

  test.each(['127.0.0.1:PORT', 'localhost:PORT', '[::1]:PORT', 'LOCALHOST:PORT', '127.0.0.2:PORT'])('serves Host %s', async (host) => {
    const res = await raw(h.url, 'GET', '/me', { host: host.replace('PORT', String(port)) });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ userId: 'local', role: 'admin', auth: false });
  });

  test.each(['attacker.example', 'attacker.example:PORT', '127.0.0.1', '127.0.0.1:1', 'localhost.attacker.example:PORT', '127.0.0.1.nip.io:PORT', '0.0.0.0:PORT', '[::ffff:7f00:1]:PORT'])(
    'refuses Host %j with 403 (DNS rebinding)',
    async (host) => {
      const res = await raw(h.url, 'GET', '/me', { host: host.replace('PORT', String(port)) });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden_host');
    },
  );

  test('a rebinding page cannot cancel a run or read it', async () => {
    const { runId } = await startAskingRun(h, 'alice');
    const cancel = await raw(h.url, 'POST', `/runs/${runId}/cancel`, { host: `attacker.example:${port}`, 'content-type': 'application/json' }, '{}');
    expect(cancel.status).toBe(403);
    const read = await raw(h.url, 'GET', `/runs/${runId}`, { host: `attacker.example:${port}` });
    expect(read.status).toBe(403);
    expect(JSON.stringify(read.body)).not.toContain(runId);
    expect((await h.store.getRun(runId))?.status).toBe('running');
  });

  test.each(['http://attacker.example', `http://attacker.example:PORT`, 'null', 'http://127.0.0.1:1', 'file://', 'http://localhost:PORT/path'])(
    'refuses Origin %j with 403, even with a loopback Host',
    async (origin) => {
      const res = await raw(h.url, 'GET', '/runs', { host: `127.0.0.1:${port}`, origin: origin.replace('PORT', String(port)) });
      expect(res.status).toBe(403);
      expect(res.body.error.code).toBe('forbidden_origin');
    },
  );

  test('accepts its own page as Origin', async () => {
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]) {
      expect((await raw(h.url, 'GET', '/runs', { host: `127.0.0.1:${port}`, origin })).status).toBe(200);
    }
  });

  test('a cross-site simple request (text/plain, empty body, no content type) cannot cancel a run: 415, still running', async () => {
    const { runId, interactionId } = await startAskingRun(h, 'alice');
    const host = `127.0.0.1:${port}`;
    const plain = await raw(h.url, 'POST', `/runs/${runId}/cancel`, { host, 'content-type': 'text/plain' }, '');
    expect(plain.status).toBe(415);
    expect(plain.body.error.code).toBe('unsupported_media_type');
    const none = await raw(h.url, 'POST', `/runs/${runId}/cancel`, { host });
    expect(none.status).toBe(415);
    const form = await raw(h.url, 'POST', `/interactions/${enc(interactionId)}/respond`, { host, 'content-type': 'application/x-www-form-urlencoded' }, 'kind=confirm&confirmed=true');
    expect(form.status).toBe(415);
    const multipart = await raw(h.url, 'POST', '/runs', { host, 'content-type': 'multipart/form-data; boundary=x' }, '--x--');
    expect(multipart.status).toBe(415);
    expect((await h.store.getRun(runId))?.status).toBe('running');
    expect((await h.store.getInteraction(interactionId))?.status).toBe('pending');
    // The page's own request (JSON, empty object) does act.
    const json = await raw(h.url, 'POST', `/runs/${runId}/cancel`, { host, 'content-type': 'application/json' }, '');
    expect(json.status).toBe(200);
    await eventually(async () => ((await h.store.getRun(runId))?.status === 'cancelled' ? true : undefined));
  });

  test('a DELETE without the JSON content type removes nothing', async () => {
    const host = `127.0.0.1:${port}`;
    expect((await raw(h.url, 'POST', '/permissions/local/deny', { host, 'content-type': 'application/json' }, JSON.stringify({ rule: 'Bash(rm *)' }))).status).toBe(201);
    const del = await raw(h.url, 'DELETE', `/permissions/local/deny/${enc('Bash(rm *)')}`, { host });
    expect(del.status).toBe(415);
    expect((await h.store.listUserPermissions('local')).map((r) => r.rule)).toContain('Bash(rm *)');
  });
});

describe('auth on', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  test('Host is not checked (a token is needed, and a browser never attaches it cross-site)', async () => {
    const res = await h.api('alice', 'GET', '/me', undefined, {});
    expect(res.status).toBe(200);
  });

  test('state-changing requests still need the JSON content type', async () => {
    const { runId } = await startAskingRun(h, 'alice');
    const res = await h.api('alice', 'POST', `/runs/${runId}/cancel`, '', { 'content-type': 'text/plain' });
    expect(res.status).toBe(415);
    expect((await h.store.getRun(runId))?.status).toBe('running');
  });

  test('401 says how to authenticate (WWW-Authenticate: Bearer), and whether the token was the problem', async () => {
    const none = await h.api('nobody', 'GET', '/runs');
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe('Bearer realm="sage"');
    const wrong = await h.api('nobody', 'GET', '/runs', undefined, { authorization: 'Bearer not-a-real-token' });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="sage", error="invalid_token"');
  });
});

describe('loopbackRequestProblem', () => {
  test('without a known port, any loopback name passes and others do not', () => {
    expect(loopbackRequestProblem('localhost:1234', undefined, undefined)).toBeUndefined();
    expect(loopbackRequestProblem('evil.example:1234', undefined, undefined)).toMatch(/loopback name/);
    expect(loopbackRequestProblem(undefined, undefined, undefined)).toMatch(/loopback name/);
    expect(loopbackRequestProblem('', undefined, undefined)).toMatch(/loopback name/);
    expect(loopbackRequestProblem('user@127.0.0.1:1234', undefined, 1234)).toMatch(/loopback name/);
    expect(loopbackRequestProblem('127.0.0.1:1234/x', undefined, 1234)).toMatch(/loopback name/);
  });
  test('a Host without a port means port 80', () => {
    expect(loopbackRequestProblem('127.0.0.1', undefined, 80)).toBeUndefined();
    expect(loopbackRequestProblem('127.0.0.1', undefined, 7878)).toBeDefined();
  });
});
