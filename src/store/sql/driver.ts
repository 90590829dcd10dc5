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
  close(): Promise<void>;
}

/** `?` → `$1, $2, …` for Postgres (our statements never contain a literal `?`). */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}
