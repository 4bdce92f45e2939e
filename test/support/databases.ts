/**
 * The databases every suite runs on: SQLite (a temp file), PGlite (PostgreSQL in-process) and,
 * when TEST_DATABASE_URL is set, a real PostgreSQL server (a fresh database per suite, dropped
 * afterwards). TEST_DATABASES=sqlite,pglite narrows the list.
 *
 * PGlite suites start from a dump of a migrated cluster (pglite-template.ts) instead of running
 * initdb and the migrations each time: about 1 s per suite instead of 6-10 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { openDatabase, type DatabaseHandle } from '../../src/db/connect.js';
import { discardPgliteTemplate, pgliteTemplate } from './pglite-template.js';

export type TestDatabaseName = 'sqlite' | 'pglite' | 'postgres';

export interface TestDatabase {
  name: TestDatabaseName;
  /** A URL other processes can open (sqlite file or postgres database); undefined for PGlite. */
  url: string | undefined;
  handle: DatabaseHandle;
  dispose(): Promise<void>;
}

export function testDatabaseNames(): TestDatabaseName[] {
  const all: TestDatabaseName[] = ['sqlite', 'pglite'];
  // Under CI=true every suite runs on a real PostgreSQL server too: its absence fails the run.
  if (process.env.TEST_DATABASE_URL) all.push('postgres');
  else if (process.env.CI === 'true') throw new Error('CI=true: TEST_DATABASE_URL must name a PostgreSQL server (.ci/run sets it); the suites would skip PostgreSQL silently');
  const only = process.env.TEST_DATABASES?.split(',').map((s) => s.trim());
  return only ? all.filter((n) => only.includes(n)) : all;
}

export async function createTestDatabase(name: TestDatabaseName): Promise<TestDatabase> {
  if (name === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'was-sqlite-'));
    const url = `sqlite:${join(dir, 'test.db')}`;
    const handle = await openDatabase(url);
    return { name, url, handle, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  if (name === 'pglite') {
    let handle: DatabaseHandle;
    try {
      handle = await openDatabase('pglite:', { pgliteDataDump: await pgliteTemplate() });
    } catch {
      // A damaged cached dump (or one PGlite cannot read): build a fresh one once.
      discardPgliteTemplate();
      handle = await openDatabase('pglite:', { pgliteDataDump: await pgliteTemplate() });
    }
    return { name, url: undefined, handle, dispose: async () => {} };
  }
  const adminUrl = process.env.TEST_DATABASE_URL!;
  const dbName = `was_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${dbName}`);
  await admin.end();
  const u = new URL(adminUrl);
  u.pathname = `/${dbName}`;
  const url = u.toString();
  const handle = await openDatabase(url, { poolMax: 20 });
  return {
    name,
    url,
    handle,
    dispose: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      // pg-pool's end() resolves before its sockets close: wait for the sessions to go away so
      // the forced drop does not kill clients that are still closing.
      for (let i = 0; i < 100; i++) {
        const r = await c.query('select count(*)::int as n from pg_stat_activity where datname = $1', [dbName]);
        if (r.rows[0].n === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await c.query(`drop database if exists ${dbName} with (force)`);
      await c.end();
    },
  };
}
