import { existsSync, mkdtempSync } from 'node:fs';
import { createServer, type AddressInfo, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli, writeScript } from '../support/cli.js';

/** A port on 127.0.0.1 that nothing listens on: taken from the kernel, then given back. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A "database server" that accepts each connection and drops it at once (a crashing or overloaded proxy). */
let dropping: Server;
let droppingPort: number;

beforeAll(async () => {
  dropping = createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => dropping.listen(0, '127.0.0.1', resolve));
  droppingPort = (dropping.address() as AddressInfo).port;
});

afterAll(async () => {
  await new Promise<void>((resolve) => dropping.close(() => resolve()));
});

/** Runs the built CLI against a Postgres URL that cannot be used; its own home, no API keys. */
async function sage(args: string[], url: string) {
  const dir = mkdtempSync(join(tmpdir(), 'sage-cli-store-'));
  return { dir, ...(await runCli(args, { cwd: dir, env: { SAGE_HOME: dir, SAGE_DATABASE_URL: url }, timeoutMs: 40_000 })) };
}

/** One line on stderr that names store_unavailable, no stack trace, exit 1, nothing on stdout. */
function expectOneStoreLine(result: { code: number | null; stdout: string; stderr: string }): void {
  const lines = result.stderr.trim().split('\n');
  expect(lines, result.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(/^error: .*store_unavailable/);
  expect(result.stderr).not.toMatch(/^\s+at /m);
  expect(result.stdout).toBe('');
  expect(result.code).toBe(1);
}

describe('the CLI when the store is unavailable', { timeout: 60_000 }, () => {
  const targets = [
    ['a closed port', async () => `postgres://sage@127.0.0.1:${await closedPort()}/sage`],
    ['a server that drops every connection', () => Promise.resolve(`postgres://sage@127.0.0.1:${droppingPort}/sage`)],
  ] as const;

  for (const [what, url] of targets) {
    it(`sage respond --allow, ${what}: one line naming store_unavailable, exit 1`, async () => {
      expectOneStoreLine(await sage(['respond', 'run_x:call_0_0:permission', '--allow'], await url()));
    });

    it(`sage run, ${what}: one line naming store_unavailable, exit 1, nothing run`, async () => {
      const script = writeScript([{ toolCalls: [{ name: 'Bash', input: { command: 'touch ran' } }] }, { text: 'done' }]);
      const result = await sage(['run', 'touch a file', '--model', `scripted:${script}`, '--non-interactive', '--auto', 'allow'], await url());
      expectOneStoreLine(result);
      expect(existsSync(join(result.dir, 'ran'))).toBe(false);
    });
  }
});
