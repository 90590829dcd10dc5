import pg from 'pg';
import { SageError } from '../../errors/index.js';
import { StoreUnavailableError } from '../errors.js';
import { StoreHealth } from '../store-faults.js';
import { assertStorable, numberPlaceholders, type Row, type SqlDriver, type SqlParam, type SqlRunner, type SqlTx } from './driver.js';

export interface PostgresOptions {
  /** Tables live in this schema (created when missing); default `public`. Tests use one per run. */
  schema?: string;
  /** Pool size; default 10. */
  max?: number;
  /**
   * `application_name` of the pool's connections (the LISTEN connection is `sage-listen sage_<schema>`);
   * default `sage <schema>`: an operator sees in pg_stat_activity whose connections they are.
   */
  applicationName?: string;
}

/** A Postgres transaction: work can be queued to run in it right before its COMMIT. */
export interface PostgresTx extends SqlTx {
  /** Runs `fn` in the transaction after the caller's work, right before COMMIT (not on rollback). */
  beforeCommit(fn: () => Promise<void>): void;
  /**
   * Sends the statements `sql()` returns (no parameters: literals escaped by the caller) in the
   * same message as COMMIT, so they cost no round trip of their own: Postgres runs them in the
   * transaction, then commits; if one fails, nothing after it runs and the transaction rolls back.
   */
  withCommit(sql: () => string): void;
}

export function isPostgresTx(tx: SqlTx): tx is PostgresTx {
  return typeof (tx as Partial<PostgresTx>).beforeCommit === 'function';
}

/** Postgres through `pg`: a pool for statements, transactions on one pooled client. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const;
  readonly pool: pg.Pool;
  readonly schema: string;
  readonly location: string;
  /** Down or full since the last statement that failed so (see StoreHealth). */
  readonly health = new StoreHealth();

  constructor(
    readonly url: string,
    options: PostgresOptions = {},
  ) {
    this.schema = options.schema ?? 'public';
    if (!/^[a-z_][a-z0-9_]*$/.test(this.schema)) throw new StoreUnavailableError(redact(url), `"${this.schema}" is not a valid schema name (lowercase letters, digits, _).`);
    this.location = redact(url) + (this.schema === 'public' ? '' : ` (schema ${this.schema})`);
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      application_name: options.applicationName ?? `sage ${this.schema}`,
      // No connect timeout: pg-pool counts the wait for a free client in it, so a busy pool would
      // fail statements as store_unavailable. A refused connection fails at once anyway, and TCP
      // keepalive notices a peer that vanished without closing.
      keepAlive: true,
      // Unqualified table names resolve to the run's schema on every connection.
      options: `-c search_path=${this.schema}`,
    });
    // An idle client losing its connection must not crash the process: the pool drops it, and the
    // next statement opens a new connection (a checked-out client has its own handler: transactionOnce).
    this.pool.on('error', (error) => void this.health.failed(error, this.location));
  }

  /** Runs `work`, turning a lost or refused connection into StoreDownError (and a full disk into StoreFullError). */
  private guard<T>(wrote: boolean, work: () => Promise<T>): Promise<T> {
    return this.health.guard(this.location, wrote, work);
  }

  query<T = Row>(sql: string, params: readonly SqlParam[] = []): Promise<T[]> {
    return this.guard(!/^\s*select\b/i.test(sql), () => runQuery<T>(this.pool, sql, params));
  }

  execute(sql: string, params: readonly SqlParam[] = []): Promise<number> {
    return this.guard(true, async () => {
      assertStorable(params);
      const result = await this.pool.query(numberPlaceholders(sql), params as SqlParam[]);
      return result.rowCount ?? 0;
    });
  }

  insertRows(table: string, columns: readonly string[], rows: readonly SqlParam[][], onConflict?: string): Promise<void> {
    return this.guard(true, () => insertRows(this.pool, table, columns, rows, onConflict));
  }

  /** One round trip to the server: resolves when it answers (readiness checks). */
  async ping(): Promise<void> {
    await this.guard(false, () => this.pool.query('SELECT 1'));
  }

  /**
   * Runs `fn` in one transaction. A transaction Postgres aborts as a deadlock victim (40P01) or a
   * serialization failure (40001) wrote nothing and is run again (a few times): a run's write must
   * not fail the run because another instance's lease renewal crossed it.
   */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    return this.guard(true, async () => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await this.transactionOnce(fn);
        } catch (error) {
          const code = (error as { code?: unknown }).code;
          if ((code !== '40P01' && code !== '40001') || attempt >= 5) throw error;
          await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
        }
      }
    });
  }

  /**
   * One transaction on one pooled client. While the client is out of the pool the pool does not
   * listen for its errors, and `pg` emits the loss of its connection (a terminated backend, a
   * restart) as an 'error' event: unheard, that event ends the process. So the transaction holds a
   * handler until the client goes back; a client whose connection was lost is destroyed on release,
   * never reused, and the transaction fails with what was lost — Postgres rolls back a transaction
   * whose connection ends before COMMIT, so nothing of it was written (a loss during COMMIT itself
   * leaves it committed or not: the caller cannot tell, and every write is safe to ask again).
   */
  private async transactionOnce<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let lost: Error | undefined;
    const onError = (error: Error) => {
      lost ??= error;
    };
    client.on('error', onError);
    const giveBack = (error?: Error) => {
      client.removeListener('error', onError);
      // Released with an error, pg-pool ends the client instead of keeping it idle.
      client.release(error ?? lost);
    };
    const after: (() => void)[] = [];
    const before: (() => Promise<void>)[] = [];
    const withCommit: (() => string)[] = [];
    const tx: PostgresTx = {
      query: <R>(sql: string, params: readonly SqlParam[] = []) => runQuery<R>(client, sql, params),
      execute: async (sql, params = []) => {
        assertStorable(params);
        return (await client.query(numberPlaceholders(sql), params as SqlParam[])).rowCount ?? 0;
      },
      insertRows: (table, columns, rows, onConflict) => insertRows(client, table, columns, rows, onConflict),
      afterCommit: (f) => void after.push(f),
      beforeCommit: (f) => void before.push(f),
      withCommit: (f) => void withCommit.push(f),
    };
    try {
      await client.query('BEGIN');
      const result = await fn(tx);
      for (const f of before) await f();
      // One simple-protocol message for the last statements and the COMMIT: one round trip, not two.
      await client.query([...withCommit.map((f) => f()), 'COMMIT'].join(';\n'));
      giveBack();
      for (const f of after) f();
      return result;
    } catch (error) {
      if (lost) {
        // The connection is gone: the server rolled the transaction back when it ended.
        giveBack();
        throw storeLoss(error, lost);
      }
      try {
        await client.query('ROLLBACK');
        giveBack();
      } catch (rollbackError) {
        giveBack(rollbackError as Error);
      }
      throw error;
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/**
 * What a transaction whose connection was lost failed with: the loss itself, unless the work failed
 * with a Sage error of its own first (a refused fence, say), which says more.
 */
function storeLoss(error: unknown, lost: Error): unknown {
  return SageError.isInstance(error) ? error : lost;
}

async function runQuery<T>(on: pg.Pool | pg.PoolClient, sql: string, params: readonly SqlParam[]): Promise<T[]> {
  assertStorable(params);
  const result = await on.query(numberPlaceholders(sql), params as SqlParam[]);
  return result.rows as T[];
}

/** One multi-row INSERT, in chunks that stay under Postgres's 65,535 parameters. */
async function insertRows(on: SqlRunner | pg.Pool | pg.PoolClient, table: string, columns: readonly string[], rows: readonly SqlParam[][], onConflict = ''): Promise<void> {
  const perChunk = Math.max(1, Math.floor(60_000 / columns.length));
  for (let start = 0; start < rows.length; start += perChunk) {
    const chunk = rows.slice(start, start + perChunk);
    for (const row of chunk) assertStorable(row);
    const params: SqlParam[] = [];
    const tuples = chunk.map((row) => {
      const marks = row.map((value) => {
        params.push(value);
        return `$${params.length}`;
      });
      return `(${marks.join(', ')})`;
    });
    await (on as pg.Pool).query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES ${tuples.join(', ')} ${onConflict}`, params);
  }
}

/** A URL safe to print: the password is replaced. */
export function redact(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres (unparsable URL)';
  }
}
