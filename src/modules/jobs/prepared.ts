/**
 * Precompiled queries for the hottest statements of the job paths. Building and compiling a
 * Kysely query costs 10-20 µs every time, more than SQLite needs to run it; a query here is
 * built once per dialect with placeholder arguments, and each call only swaps the parameters.
 * The SQL is exactly what the query builder produces, so typing and dialect handling stay Kysely's.
 */
import type { CompiledQuery, Compilable, Kysely, QueryResult, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Placeholder for argument `i` while the query is compiled. */
export function arg<T = any>(i: number): T {
  return `\u0000arg:${i}` as unknown as T;
}

const ARG = /^\u0000arg:(\d+)$/;

/**
 * `build` receives the database and returns the query, using `arg(i)` where argument i goes.
 * Returns a function running it with real arguments.
 */
export function prepared<R>(build: (db: Db) => Compilable<R>): (db: Db, ...args: unknown[]) => Promise<QueryResult<R>> {
  const byAdapter = new Map<unknown, { compiled: CompiledQuery<R>; slots: (number | null)[] }>();
  return (db, ...args) => {
    const adapter = db.getExecutor().adapter;
    let entry = byAdapter.get(adapter.constructor);
    if (!entry) {
      const compiled = build(db).compile();
      const slots = compiled.parameters.map((p) => {
        const m = typeof p === 'string' ? ARG.exec(p) : null;
        return m ? Number(m[1]) : null;
      });
      entry = { compiled, slots };
      byAdapter.set(adapter.constructor, entry);
    }
    const { compiled, slots } = entry;
    const parameters = compiled.parameters.map((p, i) => (slots[i] === null ? p : args[slots[i]!]));
    return db.executeQuery<R>({ ...compiled, parameters });
  };
}
