import { InvalidInputError } from '../../errors/index.js';
import type { StoreHealth } from '../store-faults.js';

/**
 * The little a Store needs from a SQL database. Statements are written once with `?` placeholders;
 * the Postgres driver numbers them. Both dialects support `RETURNING` and `ON CONFLICT`.
 */
export type SqlParam = string | number | null;
export type Row = Record<string, unknown>;

export interface SqlRunner {
  /** Rows of a query (or of a statement with RETURNING). */
  query<T = Row>(sql: string, params?: readonly SqlParam[]): Promise<T[]>;
  /** Changed row count of a statement. */
  execute(sql: string, params?: readonly SqlParam[]): Promise<number>;
  /** Inserts many rows into one table (one statement or a prepared loop, whichever is faster). */
  insertRows(table: string, columns: readonly string[], rows: readonly SqlParam[][], onConflict?: string): Promise<void>;
}

export interface SqlTx extends SqlRunner {
  /** Runs after the transaction committed (notifications must not announce rolled-back writes). */
  afterCommit(fn: () => void): void;
}

export interface SqlDriver extends SqlRunner {
  readonly dialect: 'sqlite' | 'postgres';
  readonly location: string;
  /** Runs `fn` in one transaction that takes the write lock at once; rolls back when it throws. */
  transaction<T>(fn: (tx: SqlTx) => Promise<T>): Promise<T>;
  /** Changes when another connection committed (SQLite's data_version); absent when the database cannot tell. */
  dataVersion?(): number | undefined;
  /** What the last statements said about the database (down, full, ok). */
  readonly health?: StoreHealth;
  /** One round trip to the database (readiness checks). */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

/** `?` → `$1, $2, …` for Postgres (our statements never contain a literal `?`). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * Refuses a string the database would reject or silently change: a NUL character (Postgres fails
 * the statement with "invalid byte sequence for encoding UTF8: 0x00") or an unpaired UTF-16
 * surrogate (not Unicode: both drivers would write U+FFFD instead). Checked in both dialects so the
 * backends accept the same inputs; JSON bodies never trip it (JSON.stringify escapes both).
 */
export function assertStorable(params: readonly SqlParam[]): void {
  for (const value of params) {
    if (typeof value !== 'string') continue;
    if (value.includes('\u0000')) {
      throw new InvalidInputError('A text to store contains a NUL character (\\u0000), which the store cannot keep; remove it and try again.');
    }
    // String#isWellFormed is in every Node this package supports (20+), not yet in the ES2023 lib.
    if (!(value as unknown as { isWellFormed(): boolean }).isWellFormed()) {
      throw new InvalidInputError('A text to store contains an unpaired UTF-16 surrogate (not valid Unicode), which the store cannot keep; send well-formed text.');
    }
  }
}
