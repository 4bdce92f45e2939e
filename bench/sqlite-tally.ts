/**
 * Instruments for the SQLite benches (bench/sqlite-statements.ts, bench/sqlite-provider-path.ts),
 * in one process: every call of a better-sqlite3 statement (BEGIN, savepoints and COMMIT
 * included, where the WAL frames are written) is timed while `tally.recording` is set, and
 * `walFrames` reads which b-trees the frames of a write-ahead log belong to. Statements are keyed
 * by their first 110 characters (TALLY_WIDTH=N prints N).
 */
import SqliteDatabase from 'better-sqlite3';
import { readFileSync } from 'node:fs';

interface Tally {
  calls: number;
  ns: bigint;
}

const tallies = new Map<string, Tally>();
export const tally = { recording: false };

// Every connection's statements share one prototype: time its calls.
const probe = new SqliteDatabase(':memory:');
const statementProto = Object.getPrototypeOf(probe.prepare('select 1')) as Record<string, (...a: unknown[]) => unknown>;
probe.close();
for (const method of ['run', 'all', 'get', 'iterate']) {
  const original = statementProto[method]!;
  statementProto[method] = function (this: { source: string }, ...args: unknown[]) {
    if (!tally.recording) return original.apply(this, args);
    const t0 = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      const key = this.source.replace(/\s+/g, ' ').slice(0, Number(process.env.TALLY_WIDTH ?? 110));
      const t = tallies.get(key) ?? { calls: 0, ns: 0n };
      t.calls++;
      t.ns += process.hrtime.bigint() - t0;
      tallies.set(key, t);
    }
  };
}

/** Prints the statements recorded since the last report, per unit of work; returns SQLite µs per unit. */
export function report(title: string, per: number, cpu: NodeJS.CpuUsage): number {
  const rows = [...tallies].sort((a, b) => Number(b[1].ns - a[1].ns));
  const total = rows.reduce((sum, [, t]) => sum + Number(t.ns), 0) / 1000 / per;
  process.stdout.write(`\n${title}: ${((cpu.user + cpu.system) / per).toFixed(1)} µs CPU each, of which SQLite ${total.toFixed(1)} µs\n`);
  for (const [text, t] of rows) {
    const us = Number(t.ns) / 1000 / per;
    if (us >= 0.2) process.stdout.write(`  ${us.toFixed(2).padStart(7)} µs  ${(t.calls / per).toFixed(2).padStart(5)} calls  ${text}\n`);
  }
  tallies.clear();
  return total;
}

/**
 * The frames of the database's write-ahead log (those of its current salt: written since the last
 * reset), counted per b-tree (table or index, by `dbstat`), and the commits among them.
 */
export function walFrames(path: string): { commits: number; frames: number; byTree: Map<string, number> } {
  const wal = readFileSync(`${path}-wal`);
  const byTree = new Map<string, number>();
  if (wal.length < 32) return { commits: 0, frames: 0, byTree };
  const pageSize = wal.readUInt32BE(8);
  const [salt1, salt2] = [wal.readUInt32BE(16), wal.readUInt32BE(20)];
  const reader = new SqliteDatabase(path, { readonly: true, fileMustExist: true });
  const owner = new Map<number, string>();
  try {
    for (const r of reader.prepare('select name, pageno from dbstat').all() as { name: string; pageno: number }[]) owner.set(r.pageno, r.name);
  } finally {
    reader.close();
  }
  let commits = 0;
  let frames = 0;
  for (let at = 32; at + 24 + pageSize <= wal.length; at += 24 + pageSize) {
    if (wal.readUInt32BE(at + 8) !== salt1 || wal.readUInt32BE(at + 12) !== salt2) break;
    const page = wal.readUInt32BE(at);
    const tree = owner.get(page) ?? `page ${page}`;
    byTree.set(tree, (byTree.get(tree) ?? 0) + 1);
    frames++;
    if (wal.readUInt32BE(at + 4) !== 0) commits++;
  }
  return { commits, frames, byTree };
}
