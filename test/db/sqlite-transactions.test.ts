/**
 * Embedded SQLite beside another process on the same file (the CLI beside a live server): a write
 * transaction takes the write lock when it begins (BEGIN IMMEDIATE), so its first write after a
 * read never fails with SQLITE_BUSY because the other process committed in between. A deferred
 * BEGIN took the lock only at the first write, and that upgrade fails at once when the
 * transaction's snapshot is stale; busy_timeout cannot help it (a fresh-clone CI run failed
 * `keys revoke` from the CLI that way).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import SqliteDatabase from 'better-sqlite3';
import { openDatabase } from '../../src/db/connect.js';

test('a SQLite write transaction holds the write lock from its start: its write after a read succeeds although another connection tried to write in between', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'was-sqlite-tx-'));
  const file = join(dir, 'x.db');
  const handle = await openDatabase(`sqlite:${file}`);
  // The other process: its own connection to the file, failing at once instead of waiting
  // (a synchronous wait here would block the event loop the transaction runs on).
  const other = new SqliteDatabase(file);
  other.pragma('busy_timeout = 0');
  try {
    await sql`create table t (id integer primary key, v text not null)`.execute(handle.db);
    await sql`insert into t (v) values ('first')`.execute(handle.db);
    let otherWrite: string | undefined;
    await handle.db.transaction().execute(async (trx) => {
      const before = await sql<{ n: number }>`select count(*) as n from t`.execute(trx);
      assert.equal(Number(before.rows[0]!.n), 1);
      try {
        other.prepare("insert into t (v) values ('other')").run();
        otherWrite = 'committed';
      } catch (err) {
        otherWrite = (err as { code?: string }).code;
      }
      await sql`insert into t (v) values ('second')`.execute(trx);
    });
    assert.equal(otherWrite, 'SQLITE_BUSY', 'the other connection waits for the transaction (here: fails at once)');
    other.prepare("insert into t (v) values ('other')").run();
    assert.deepEqual(other.prepare('select v from t order by id').all(), [{ v: 'first' }, { v: 'second' }, { v: 'other' }]);
  } finally {
    other.close();
    await handle.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
