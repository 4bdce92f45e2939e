/**
 * The bench's proof that refused requests wrote nothing: row counts and a checksum of the rows
 * of every table of the service's SQLite database (read by a second connection; the checksum
 * sees updates in place, which counts cannot), the usage counters' total and SQLite's
 * data_version, before and after a run.
 */
import { createHash } from 'node:crypto';
import type SqliteDatabase from 'better-sqlite3';

export interface Snapshot {
  dataVersion: number;
  counts: Record<string, number>;
  /** SHA-256 of each table's rows (every column), independent of row order. */
  checksums: Record<string, string>;
  usageUsed: number;
  /** Points in the usage history (minute, hour and day rows: each admitted point three times). */
  historyPoints: number;
  creditTransactions: number;
}

/** A digest of every row of `table`, each row's columns as JSON, rows sorted (storage order does not matter). */
function tableChecksum(db: SqliteDatabase.Database, table: string): string {
  const rows = (db.prepare(`select * from "${table}"`).raw().all() as unknown[][]).map((row) =>
    JSON.stringify(row, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : Buffer.isBuffer(v) ? v.toString('base64') : v)),
  );
  rows.sort();
  const hash = createHash('sha256');
  for (const row of rows) hash.update(row).update('\n');
  return hash.digest('hex');
}

/** Row counts and row checksums of every table, as another connection (the bench) sees the server's database. */
export function snapshot(db: SqliteDatabase.Database): Snapshot {
  const tables = (db.prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as { name: string }[]).map((r) => r.name);
  const counts: Record<string, number> = {};
  const checksums: Record<string, string> = {};
  // One read transaction: counts and checksums of one consistent state.
  db.transaction(() => {
    for (const t of tables) {
      counts[t] = (db.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n;
      checksums[t] = tableChecksum(db, t);
    }
  })();
  return {
    dataVersion: db.pragma('data_version', { simple: true }) as number,
    counts,
    checksums,
    usageUsed: Number((db.prepare('select coalesce(sum(used), 0) as s from usage_counters').get() as { s: number }).s),
    historyPoints: tables.includes('usage_history') ? Number((db.prepare("select coalesce(sum(count), 0) as s from usage_history where kind = 'points'").get() as { s: number }).s) : 0,
    creditTransactions: counts.credit_transactions ?? 0,
  };
}

export interface WriteCheck {
  ok: boolean;
  notes: string[];
}

/**
 * A refused run wrote nothing: only usage_counters may move, by the points it admitted, and the
 * usage history (issue 36) only with them: by those points (three rows each: minute, hour, day)
 * and the counts of refusals that waited for a write of their workspace (usage/history.ts).
 */
export function compareSnapshots(before: Snapshot, after: Snapshot, admitted: number): WriteCheck {
  const notes: string[] = [];
  let ok = true;
  for (const [table, n] of Object.entries(before.counts)) {
    if (table === 'usage_counters' || (table === 'usage_history' && admitted > 0)) continue;
    if (after.counts[table] !== n) {
      ok = false;
      notes.push(`${table}: ${n} → ${after.counts[table]} rows`);
    } else if (after.checksums[table] !== before.checksums[table]) {
      // Same number of rows, other contents: an update (or a delete and an insert).
      ok = false;
      notes.push(`${table}: rows changed in place (checksum ${before.checksums[table]?.slice(0, 12)} → ${after.checksums[table]?.slice(0, 12)})`);
    }
  }
  if (after.creditTransactions !== before.creditTransactions) {
    ok = false;
    notes.push(`credit_transactions changed: ${before.creditTransactions} → ${after.creditTransactions}`);
  }
  // Each admitted point is added to the workspace's minute and month counters.
  const expectedUsed = before.usageUsed + 2 * admitted;
  if (after.usageUsed !== expectedUsed) {
    ok = false;
    notes.push(`usage_counters sum(used) ${before.usageUsed} → ${after.usageUsed}, expected ${expectedUsed} (${admitted} admitted)`);
  }
  if (admitted > 0 && after.historyPoints !== before.historyPoints + 3 * admitted) {
    ok = false;
    notes.push(`usage_history points ${before.historyPoints} → ${after.historyPoints}, expected +${3 * admitted} (${admitted} admitted)`);
  }
  const rowGrowth = (after.counts.usage_counters ?? 0) - (before.counts.usage_counters ?? 0);
  if (admitted === 0 && rowGrowth !== 0) {
    ok = false;
    notes.push(`usage_counters gained ${rowGrowth} rows with nothing admitted`);
  }
  if (admitted === 0 && after.dataVersion !== before.dataVersion) notes.push('note: the database was written meanwhile (data_version changed)');
  if (admitted > 0) notes.push(`${admitted} request(s) admitted at a minute rollover; usage_counters +${2 * admitted} points, +${rowGrowth} row(s)`);
  return { ok, notes };
}
