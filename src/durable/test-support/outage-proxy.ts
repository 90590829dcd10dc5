import { createServer, Socket } from 'node:net';

/**
 * A TCP relay in front of a database server that the test can take down and bring back: while
 * down, every new connection is closed as soon as it opens (the server unreachable, as during a
 * failover); connections already open are left to whatever the test does to them.
 */
export interface OutageProxy {
  port: number;
  readonly isDown: boolean;
  down(): void;
  up(): void;
  close(): Promise<void>;
}

export async function startOutageProxy(target: { host: string; port: number }): Promise<OutageProxy> {
  let isDown = false;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    if (isDown) return void client.destroy();
    const upstream = new Socket();
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
    upstream.connect(target.port, target.host, () => {
      client.pipe(upstream);
      upstream.pipe(client);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('the outage proxy has no port');
  return {
    port: address.port,
    get isDown() {
      return isDown;
    },
    down: () => void (isDown = true),
    up: () => void (isDown = false),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
