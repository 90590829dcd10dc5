import type { NotificationHub } from '../notification-hub.js';
import type { StoreNotification } from '../types.js';
import type { SqlTx } from './driver.js';

/** How notifications leave a transaction and reach subscribers (in-process, or LISTEN/NOTIFY). */
export interface NotificationTransport {
  /** Sends when the transaction commits, never before. */
  inTx(tx: SqlTx, notification: StoreNotification): Promise<void>;
  publish(notification: StoreNotification): Promise<void>;
  /** Ready to receive (Postgres: the LISTEN connection is up). */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/** In-process delivery (SQLite): a second process sharing the file sees the data, not the pushes. */
export function inProcessTransport(hub: NotificationHub): NotificationTransport {
  return {
    inTx: async (tx, n) => tx.afterCommit(() => hub.deliver(n)),
    publish: async (n) => hub.deliver(n),
    listen: async () => {},
    close: async () => {},
  };
}
