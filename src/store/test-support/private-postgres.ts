import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * A Postgres cluster of a test's own (initdb into a temp folder, a free port on 127.0.0.1, trust
 * auth), so a test may restart or stop it without touching the shared server other tests use.
 */
export interface PrivatePostgres {
  url: string;
  port: number;
  /** pg_ctl restart -m fast: every connection ends, and it resolves once the server accepts again. */
  restart(): Promise<void>;
  /** pg_ctl stop -m fast: connections end and new ones are refused until start. */
  stop(): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** initdb and pg_ctl from the postgresql package (Debian puts them outside PATH). */
export function postgresBinDir(): string {
  const roots = existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a)) : [];
  for (const version of roots) {
    const bin = join('/usr/lib/postgresql', version, 'bin');
    if (existsSync(join(bin, 'initdb')) && existsSync(join(bin, 'pg_ctl'))) return bin;
  }
  for (const dir of (process.env.PATH ?? '').split(':')) if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  throw new Error('initdb and pg_ctl were not found (looked in /usr/lib/postgresql/*/bin and PATH): install the Postgres server binaries, e.g. `apt-get install postgresql`, to run the store-restart tests.');
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function startPrivatePostgres(): Promise<PrivatePostgres> {
  const bin = postgresBinDir();
  const dir = mkdtempSync(join(tmpdir(), 'sage-pg-'));
  const data = join(dir, 'data');
  // initdb refuses to run as root: as root, the cluster belongs to the postgres user.
  const asRoot = process.getuid?.() === 0;
  if (asRoot) chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  const pg = (tool: string, args: string[]) => (asRoot ? run('runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]) : run(join(bin, tool), args));
  await pg('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  // Sockets in the temp folder, not /var/run/postgresql (owned by the shared server's cluster).
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=60`;
  const ctl = (...args: string[]) => pg('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, '-w', '-t', '60', ...args]);
  await ctl('start');
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    restart: async () => void (await ctl('restart', '-m', 'fast')),
    stop: async () => void (await ctl('stop', '-m', 'fast')),
    start: async () => void (await ctl('start')),
    destroy: async () => {
      await ctl('stop', '-m', 'immediate').catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
