/**
 * Precompiled queries for the hottest statements of the job paths. Building and compiling a
 * Kysely query costs 10-20 µs every time, more than SQLite needs to run it; a query here is
 * built once per dialect with placeholder arguments, and each call only swaps the parameters.
 * The SQL is exactly what the query builder produces, so typing and dialect handling stay Kysely's.
 *
 * Inside an embedded SQLite transaction the statement runs straight on better-sqlite3
 * (db/sqlite-direct.ts), skipping Kysely's asynchronous driver path.
 *
 * On node-postgres (Capabilities.namedStatements) `.named()` also sends the statement by name:
 * the server parses and plans it once per connection instead of on every call (about 30 µs of
 * PostgreSQL CPU per call for a job read). Name the columns of a named SELECT (no `*`): a
 * statement kept across a migration that adds a column would otherwise fail with "cached plan
 * must not change result type".
 */
import type { CompiledQuery, Compilable, Kysely, QueryResult, Transaction } from 'kysely';
import type { Database } from './schema.js';
import { directSqlite, runDirect } from './sqlite-direct.js';
import { statementName } from './statement-names.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Placeholder for argument `i` while the query is compiled. */
export function arg<T = any>(i: number): T {
  return `\u0000arg:${i}` as unknown as T;
}

const ARG = /^\u0000arg:(\d+)$/;

export interface PreparedQuery<R> {
  (db: Db, ...args: unknown[]): Promise<QueryResult<R>>;
  /**
   * The same query sent as a named statement when `named` is true (the database's
   * Capabilities.namedStatements); otherwise exactly the call above.
   */
  named(db: Db, named: boolean | undefined, ...args: unknown[]): Promise<QueryResult<R>>;
}

interface Entry<R> {
  compiled: CompiledQuery<R>;
  slots: (number | null)[];
  /** The statement name: derived from the SQL text, so one name never means two statements. */
  name: string;
}

/**
 * `build` receives the database and returns the query, using `arg(i)` where argument i goes.
 * Returns a function running it with real arguments.
 */
export function prepared<R>(build: (db: Db) => Compilable<R>): PreparedQuery<R> {
  const byAdapter = new Map<unknown, Entry<R>>();
  const entryFor = (db: Db): Entry<R> => {
    const adapter = db.getExecutor().adapter;
    let entry = byAdapter.get(adapter.constructor);
    if (!entry) {
      const compiled = build(db).compile();
      const slots = compiled.parameters.map((p) => {
        const m = typeof p === 'string' ? ARG.exec(p) : null;
        return m ? Number(m[1]) : null;
      });
      const name = statementName(compiled.sql);
      entry = { compiled, slots, name };
      byAdapter.set(adapter.constructor, entry);
    }
    return entry;
  };
  const parametersOf = (entry: Entry<R>, args: unknown[]) => entry.compiled.parameters.map((p, i) => (entry.slots[i] === null ? p : args[entry.slots[i]!]));

  const run = ((db: Db, ...args: unknown[]) => {
    const entry = entryFor(db);
    const direct = directSqlite(db);
    if (direct) return Promise.resolve(runDirect<R>(direct, entry.compiled.sql, parametersOf(entry, args)));
    return db.executeQuery<R>({ ...entry.compiled, parameters: parametersOf(entry, args) });
  }) as PreparedQuery<R>;

  run.named = (db, named, ...args) => {
    if (!named) return run(db, ...args);
    const entry = entryFor(db);
    // Kysely's PostgreSQL driver hands `sql` to pg's client.query unchanged, and pg takes a
    // query config object there; pg adds the values to it, so it is a new object every call.
    const config = { name: entry.name, text: entry.compiled.sql };
    return db.executeQuery<R>({ ...entry.compiled, sql: config as unknown as string, parameters: parametersOf(entry, args) });
  };
  return run;
}

/**
 * Runs a query built for this call (its text fixed, only its parameters vary: a RawBuilder of a
 * multi-row write, for instance) as a named statement where the driver keeps them.
 */
export function executeNamed<R>(db: Db, named: boolean | undefined, compiled: CompiledQuery<R>): Promise<QueryResult<R>> {
  if (!named) return db.executeQuery<R>(compiled);
  return db.executeQuery<R>({ ...compiled, sql: { name: statementName(compiled.sql), text: compiled.sql } as unknown as string });
}
