import pg from 'pg';
import { randomBytes } from 'node:crypto';

/** The test server (trust auth on loopback); override with SAGE_TEST_DATABASE_URL. */
export const TEST_DATABASE_URL = process.env.SAGE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A fresh schema name per test run, so runs never see each other's rows. */
export function testSchemaName(prefix = 't'): string {
  return `${prefix}_${process.pid}_${randomBytes(4).toString('hex')}`;
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
