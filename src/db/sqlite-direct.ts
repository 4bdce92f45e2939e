/**
 * Direct execution on embedded SQLite inside a transaction. Kysely's SQLite driver is
 * asynchronous around a synchronous library: every statement goes through its connection
 * mutex, a promise chain and result wrapping, which costs several times what better-sqlite3
 * needs to run a small statement. Inside a transaction that is not needed: the transaction
 * already holds the one connection until it ends, so a statement run straight on better-sqlite3
 * lands in exactly that transaction. Outside a transaction it would not be safe (another
 * transaction may hold the connection between its awaits, and the statement would run inside
 * it), so `directSqlite` answers only for transactions and callers fall back to Kysely.
 *
 * The result has the shape Kysely's own SQLite driver returns, so callers cannot tell the paths
 * apart. Statements come from the connection's statement cache (db/connect.ts).
 */
import type { Kysely, QueryResult, Transaction } from 'kysely';

/** What the connection offers: better-sqlite3's prepare, through the statement cache. */
export interface SqliteStatements {
  prepare(sql: string): {
    reader: boolean;
    all(params: readonly unknown[]): unknown[];
    run(params: readonly unknown[]): { changes: number; lastInsertRowid: number | bigint };
  };
}

// Keyed by the Kysely adapter object, which a database shares with its transactions.
const byAdapter = new WeakMap<object, SqliteStatements>();

export function registerSqliteStatements(db: Kysely<any>, statements: SqliteStatements): void {
  byAdapter.set(db.getExecutor().adapter, statements);
}

/** The statements of an embedded SQLite transaction; undefined for anything else. */
export function directSqlite(db: Kysely<any> | Transaction<any>): SqliteStatements | undefined {
  return db.isTransaction ? byAdapter.get(db.getExecutor().adapter) : undefined;
}

export function runDirect<R>(statements: SqliteStatements, sql: string, parameters: readonly unknown[]): QueryResult<R> {
  const stmt = statements.prepare(sql);
  if (stmt.reader) return { rows: stmt.all(parameters) as R[] };
  const { changes, lastInsertRowid } = stmt.run(parameters);
  return { numAffectedRows: BigInt(changes), insertId: BigInt(lastInsertRowid), rows: [] };
}
