import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { openSqliteStore } from '../store/open-store.js';
import type { Store } from '../store/index.js';
import { DurableRunDriver } from './durable-driver.js';
import { NOT_ALLOWED_SCRIPT, RunPolicy, type RunPolicyOptions } from '../runtime/run-policy.js';
import { startServer, type RunningServer } from './server.js';
import { TOKENS } from './test-support/harness.js';

const base = mkdtempSync(join(tmpdir(), 'sage-policy-'));
const root = join(base, 'root');
const scripts = join(root, 'scripts');
const outside = join(base, 'outside');
for (const d of [root, scripts, outside, join(root, 'project')]) mkdirSync(d, { recursive: true });
const turns = JSON.stringify({ turns: [{ text: 'hello' }] });
writeFileSync(join(scripts, 'ok.json'), turns);
writeFileSync(join(outside, 'secret.json'), turns);
writeFileSync(join(scripts, 'big.json'), JSON.stringify({ turns: [{ text: 'x'.repeat(2 * 1024 * 1024) }] }));
writeFileSync(join(scripts, 'passwd-like'), 'root:x:0:0:root:/root:/bin/bash\n');
symlinkSync(join(outside, 'secret.json'), join(scripts, 'escape.json'));
symlinkSync('/', join(root, 'linkroot'));
symlinkSync(outside, join(root, 'linkout'));
symlinkSync(join(root, 'project'), join(base, 'root-link'));
const fifo = join(scripts, 'fifo.json');
let haveFifo = true;
try {
  execFileSync('mkfifo', [fifo]);
} catch {
  haveFifo = false;
}

afterAll(() => rmSync(base, { recursive: true, force: true }));

interface Server {
  server: RunningServer;
  store: Store;
  post(body: unknown): Promise<{ status: number; body: any; text: string }>;
  close(): Promise<void>;
}

async function serve(policy: RunPolicyOptions): Promise<Server> {
  const dir = mkdtempSync(join(tmpdir(), 'sage-policy-db-'));
  const store = await openSqliteStore(join(dir, 'sage.db'));
  const driver = await DurableRunDriver.open(store, { roots: [root], ...policy });
  const server = await startServer({ store, driver, port: 0, tokens: `${TOKENS.alice}=alice`, env: {}, logger: pino({ level: 'silent' }), webRoot: false, closeStore: true });
  return {
    server,
    store,
    async post(body) {
      const res = await fetch(`${server.url}/runs`, { method: 'POST', headers: { authorization: `Bearer ${TOKENS.alice}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, body: JSON.parse(text), text };
    },
    async close() {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('scripted models on a server', () => {
  test('are off by default: a valid script under the root is refused and no run is created', async () => {
    const s = await serve({});
    try {
      const res = await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}` });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input', field: 'model', message: expect.stringMatching(/disabled/) });
      expect(await s.store.listRuns({})).toEqual([]);
    } finally {
      await s.close();
    }
  });

  describe('when on (--scripted-dir)', () => {
    let s: Server;
    beforeAll(async () => {
      s = await serve({ scriptedDirs: [scripts] });
    });
    afterAll(async () => {
      await s.close();
    });

    test('a file under the folder starts a run', async () => {
      const res = await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}` });
      expect(res.status).toBe(201);
      const relative = await s.post({ task: 't', model: 'scripted:ok.json' });
      expect(relative.status).toBe(201);
    });

    // A leading space got past a startsWith check and was trimmed by the resolver.
    test.each([
      ' scripted:/etc/passwd',
      'scripted: /etc/passwd',
      'scripted :/etc/passwd',
      'Scripted:/etc/passwd',
      'SCRIPTED:/etc/passwd',
      '\tscripted:/etc/passwd',
      '\u200bscripted:/etc/passwd',
      '\ufeffscripted:/etc/passwd',
      'scripted%3A/etc/passwd',
      'file:/etc/passwd',
      'scripted:/etc/passwd\n',
    ])('refuses the spelling %j as an invalid spec and creates nothing', async (model) => {
      const before = (await s.store.listRuns({})).length;
      const res = await s.post({ task: 't', model });
      expect(res.status).toBe(400);
      expect(res.body.error).toMatchObject({ code: 'invalid_input', field: 'model' });
      expect(res.text).not.toMatch(/root:x/);
      expect((await s.store.listRuns({})).length).toBe(before);
    });

    test('refuses every file it may not read with one message: no content, no existence or type oracle', async () => {
      const refused = [
        '/etc/passwd',
        '/etc/shadow',
        '/proc/self/environ',
        '/dev/zero',
        '/dev/urandom',
        join(outside, 'secret.json'),
        join(scripts, 'escape.json'),
        join(scripts, '..', '..', 'outside', 'secret.json'),
        join(scripts, 'missing.json'),
        join(scripts, 'big.json'),
        scripts,
        '/root',
        ...(haveFifo ? [fifo] : []),
      ];
      const before = (await s.store.listRuns({})).length;
      const bodies = new Set<string>();
      for (const path of refused) {
        const res = await s.post({ task: 't', model: `scripted:${path}` });
        expect(res.status, path).toBe(400);
        expect(res.body.error.message, path).toBe(NOT_ALLOWED_SCRIPT);
        bodies.add(JSON.stringify(res.body));
      }
      expect([...bodies]).toHaveLength(1);
      expect((await s.store.listRuns({})).length).toBe(before);
    });

    test('a malformed script inside the folder is reported by problem, never by content', async () => {
      const res = await s.post({ task: 't', model: `scripted:${join(scripts, 'passwd-like')}` });
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(/not a valid script: not valid JSON: a syntax error/);
      expect(res.text).not.toMatch(/root|bash/);
    });
  });

  test('--allow-scripted alone means files under the roots', () => {
    const policy = new RunPolicy({ roots: [root], allowScriptedModels: true });
    expect(policy.scriptedDirs).toEqual([root]);
    expect(policy.model(`scripted:${join(scripts, 'ok.json')}`).id).toBe(`scripted:${join(scripts, 'ok.json')}`);
    expect(() => policy.model(`scripted:${join(outside, 'secret.json')}`)).toThrow(NOT_ALLOWED_SCRIPT);
    expect(() => policy.model(`scripted:${join(root, 'linkout', 'secret.json')}`)).toThrow(NOT_ALLOWED_SCRIPT);
  });

  test('a scripted folder or root that does not exist stops the server at start', () => {
    expect(() => new RunPolicy({ roots: [root], scriptedDirs: [join(base, 'nope')] })).toThrowError(expect.objectContaining({ code: 'server_config' }));
    expect(() => new RunPolicy({ roots: [join(base, 'nope')] })).toThrowError(expect.objectContaining({ code: 'server_config' }));
  });
});

describe('cwd (issue 10 item 4)', () => {
  let s: Server;
  beforeAll(async () => {
    s = await serve({ scriptedDirs: [scripts] });
  });
  afterAll(async () => {
    await s.close();
  });

  test.each(['linkroot/etc', 'linkroot', 'linkout', `${root}/linkroot/tmp`, '../outside', '/etc'])('refuses %j, which leads outside the root, and creates no run', async (cwd) => {
    const before = (await s.store.listRuns({})).length;
    const res = await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}`, cwd });
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_input', field: 'cwd', message: expect.stringMatching(/must be inside/) });
    expect((await s.store.listRuns({})).length).toBe(before);
  });

  test('a missing folder or a file is refused without saying what lies outside', async () => {
    expect((await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}`, cwd: 'no/such' })).body.error.message).toMatch(/does not exist/);
    expect((await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}`, cwd: 'scripts/ok.json' })).body.error.message).toMatch(/not a directory/);
  });

  test('a root given through a symlink is resolved, and the run works in the real folder', async () => {
    const policy = new RunPolicy({ roots: [join(base, 'root-link')] });
    expect(policy.roots).toEqual([join(root, 'project')]);
    expect(policy.cwd(undefined)).toBe(join(root, 'project'));
    const res = await s.post({ task: 't', model: `scripted:${join(scripts, 'ok.json')}`, cwd: 'project' });
    expect(res.status).toBe(201);
    const run = await s.store.getRun(res.body.id);
    expect(run?.options['cwd']).toBe(join(root, 'project'));
    // Nothing was written outside the root by any refused request.
    expect(readdirSync(outside)).toEqual(['secret.json']);
    expect(existsSync(join(outside, '.sage'))).toBe(false);
  });
});
