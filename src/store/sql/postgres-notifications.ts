import pg from 'pg';
import { assertStorable } from './driver.js';
import type { NotificationHub } from '../notification-hub.js';
import type { StoreNotification } from '../types.js';
import type { SqlTx } from './driver.js';
import type { NotificationTransport } from './notification-transport.js';
import { isPostgresTx, type PostgresDriver } from './postgres-driver.js';

/** Notifications per `SELECT pg_notify(…), …` statement (two parameters each). */
const NOTIFY_CHUNK = 500;

/**
 * Notifications through LISTEN/NOTIFY on a channel named after the schema, so any instance sharing
 * the database hears every commit. `url` opens the one LISTEN connection (the pool cannot hold one).
 */
export function postgresTransport(driver: PostgresDriver, url: string, hub: NotificationHub): NotificationTransport {
  const channel = `sage_${driver.schema}`;
  let listener: pg.Client | undefined;
  let listening: Promise<void> | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = 100;
  let closed = false;
  /** The connection was lost since the last LISTEN: the next one that succeeds announces a resync. */
  let missed = false;

  /**
   * One LISTEN connection. When it drops (the server restarted, the backend was terminated, the
   * network blinked) it is opened again with backoff, and subscribers get a `resync`: whatever was
   * notified while it was down is lost, so they re-check what they wait for in the tables.
   */
  const connect = (): Promise<void> => {
    // Compared against `listening` by the callbacks below, which all run after the assignment.
    let attempt: Promise<void> | undefined = undefined;
    attempt = (async () => {
      const client = new pg.Client({ connectionString: url, application_name: `sage-listen ${channel}` });
      client.on('notification', (message) => {
        if (message.channel !== channel || !message.payload) return;
        try {
          hub.deliver(JSON.parse(message.payload) as StoreNotification);
        } catch {
          // Not ours (a foreign payload on the channel): ignore it.
        }
      });
      let gone = false;
      const lost = () => {
        // 'error' and 'end' both come for one loss; a lost connection must never crash the process.
        if (gone) return;
        gone = true;
        client.end().catch(() => {});
        if (listener === client) listener = undefined;
        if (listening === attempt) listening = undefined;
        missed = true;
        if (!closed) scheduleReconnect();
      };
      client.on('error', lost);
      client.on('end', lost);
      try {
        await client.connect();
        await client.query(`LISTEN ${channel}`);
      } catch (error) {
        gone = true;
        await client.end().catch(() => {});
        if (listening === attempt) listening = undefined;
        throw error;
      }
      if (closed) {
        gone = true;
        await client.end().catch(() => {});
        return;
      }
      listener = client;
      retryMs = 100;
      if (missed) {
        missed = false;
        hub.deliver({ type: 'resync', runId: '*' });
      }
    })();
    listening = attempt;
    return attempt;
  };
  const scheduleReconnect = () => {
    if (retry || closed) return;
    retry = setTimeout(() => {
      retry = undefined;
      if (closed || listening) return;
      connect().catch(() => {
        retryMs = Math.min(retryMs * 2, 5_000);
        scheduleReconnect();
      });
    }, retryMs);
    retry.unref();
  };

  /** Each open transaction's notifications, sent together with its COMMIT. */
  const queued = new WeakMap<SqlTx, StoreNotification[]>();
  /** The `SELECT pg_notify(…)` statements for `list`, literals inlined (they ride in COMMIT's message, which takes no parameters). */
  const notifySql = (list: readonly StoreNotification[]): string => {
    const statements: string[] = [];
    for (let start = 0; start < list.length; start += NOTIFY_CHUNK) {
      const payloads = list.slice(start, start + NOTIFY_CHUNK).map((n) => JSON.stringify(n));
      assertStorable(payloads);
      statements.push(`SELECT ${payloads.map((p) => `pg_notify(${pg.escapeLiteral(channel)}, ${pg.escapeLiteral(p)})`).join(', ')}`);
    }
    return statements.join(';\n');
  };
  const notify = async (tx: SqlTx, list: readonly StoreNotification[]) => {
    for (let start = 0; start < list.length; start += NOTIFY_CHUNK) {
      const chunk = list.slice(start, start + NOTIFY_CHUNK);
      await tx.query(`SELECT ${chunk.map(() => 'pg_notify(?, ?)').join(', ')}`, chunk.flatMap((n) => [channel, JSON.stringify(n)]));
    }
  };

  return {
    inTx: async (tx: SqlTx, n: StoreNotification) => {
      // pg_notify inside the transaction is delivered on commit, in the order sent, and dropped on
      // rollback. A transaction's notifications (its events, its run, its request: often 3–4) go
      // in one statement sent in the COMMIT's own message: no round trip of their own, and none
      // while the transaction holds its row locks.
      if (!isPostgresTx(tx)) return notify(tx, [n]);
      const list = queued.get(tx);
      if (list) {
        list.push(n);
        return;
      }
      const fresh = [n];
      queued.set(tx, fresh);
      tx.withCommit(() => notifySql(fresh));
    },
    publish: async (n) => {
      await driver.query('SELECT pg_notify(?, ?)', [channel, JSON.stringify(n)]);
    },
    listen: () => listening ?? connect(),
    close: async () => {
      closed = true;
      if (retry) clearTimeout(retry);
      retry = undefined;
      await listening?.catch(() => {});
      await listener?.end().catch(() => {});
    },
  };
}
