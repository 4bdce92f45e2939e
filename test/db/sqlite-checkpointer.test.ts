/** Embedded SQLite: WAL checkpoints run on a worker thread, not inside the server's commits. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SqliteDatabase from 'better-sqlite3';
import { startCheckpointer } from '../../src/db/sqlite-checkpointer.js';
import { waitUntil } from '../support/wait.js';

function rowsInMainFile(dir: string): number {
  // The database file alone, without its WAL: only what a checkpoint has copied over. A copy
  // taken while a checkpoint writes the file can be torn (SQLITE_CORRUPT): copy again.
  for (let attempt = 1; ; attempt++) {
    copyFileSync(join(dir, 'x.db'), join(dir, 'copy.db'));
    const copy = new SqliteDatabase(join(dir, 'copy.db'), { readonly: true });
    try {
      const table = copy.prepare("select 1 from sqlite_master where name = 't'").get();
      return table ? (copy.prepare('select count(*) as n from t').get() as { n: number }).n : 0;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_CORRUPT' || attempt >= 50) throw err;
    } finally {
      copy.close();
    }
  }
}

test('committed pages reach the database file through the background checkpointer, while the writer never checkpoints below its threshold', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'was-ckpt-'));
  const db = new SqliteDatabase(join(dir, 'x.db'));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.exec('create table t (id integer primary key, v text)');
    const checkpointer = startCheckpointer(db, join(dir, 'x.db'), { intervalMs: 20, safetyPages: 1_000_000 });
    try {
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), 1_000_000, 'the writer only checkpoints past the safety threshold');
      const insert = db.prepare('insert into t (v) values (?)');
      for (let i = 0; i < 20; i++) db.transaction(() => { for (let j = 0; j < 100; j++) insert.run('x'.repeat(200)); })();
      await waitUntil(() => rowsInMainFile(dir), (n) => n === 2000, 'the checkpointer to move 2000 rows into the main file', 30_000, 25);
    } finally {
      await checkpointer.stop();
    }
    // Stopped: later commits stay in the WAL until someone checkpoints.
    db.prepare('insert into t (v) values (?)').run('after');
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(rowsInMainFile(dir), 2000);
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
