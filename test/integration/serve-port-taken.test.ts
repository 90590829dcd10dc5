import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../support/cli.js';

describe('sage serve on a port another program holds', () => {
  let holder: Server | undefined;
  afterEach(() => new Promise<void>((resolve) => (holder ? holder.close(() => resolve()) : resolve())));

  it('exits 1 with one line naming the port and the flag that fixes it, no stack trace', async () => {
    holder = createServer();
    await new Promise<void>((resolve) => holder!.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    const result = await runCli(['serve', '--port', String(port), '--young-generation', '0', '--log-level', 'silent'], { env: { SAGE_TOKENS: '', SAGE_DATABASE_URL: '' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`error: Port ${port} on 127.0.0.1 is taken (another sage serve, or another program): stop that one, or pass --port N (--port 0 picks a free one).\n`);
  });
});
