/**
 * Opens the database named by a URL: `sqlite:PATH` (embedded, better-sqlite3 in WAL mode),
 * `postgres://…` (pg pool) or `pglite:` / `pglite:DIR` (PostgreSQL in-process; tests and trials).
 * Capability flags tell the rest of the code what the backend guarantees: outside src/db/ the
 * code branches on a named capability, never on the dialect name (`dialect` is for src/db/ and
 * tests).
 */
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { CompiledQuery, Kysely, Migrator, PostgresDialect, SqliteAdapter, SqliteDialect, SqliteDriver, type DatabaseConnection, type Dialect, type Driver, type MigrationProvider, type SqliteDialectConfig } from 'kysely';
import SqliteDatabase from 'better-sqlite3';
import type { Database } from './schema.js';
import { migrations } from './migrations/index.js';
import { registerSqliteStatements } from './sqlite-direct.js';
import { startCheckpointer } from './sqlite-checkpointer.js';
import type { Pipelines } from './pg-pipeline.js';

export type DialectName = 'sqlite' | 'postgres';

/**
 * What the SQL of a backend can do, the same for every database of that backend: stores that hold
 * only a connection or transaction learn it with sqlCapabilitiesOf(db).
 */
export interface SqlCapabilities {
  /**
   * Set-based writes (PostgreSQL, also in-process): one statement applies many rows through
   * writable CTEs and `json_to_recordset`, so the batched money paths (admission, finish, claim)
   * decide a batch in this process and write it in one statement re-checked under the lock.
   */
  batchedWrites: boolean;
  /**
   * Trigger-kept per-workspace totals (`workspace_totals`, migration 0006: waiting and running
   * jobs, open holds) that reads may use instead of counting rows (embedded SQLite).
   */
  totalsTable: boolean;
  /**
   * Events carry the id of the transaction that wrote them (`tx_id`, xid8) and the feed pages by
   * commit order behind the oldest running transaction (PostgreSQL); otherwise one writer at a
   * time makes id order commit order.
   */
  commitOrderFeed: boolean;
  /** `INDEXED BY` pins a query to an index (SQLite): the output head read uses it. */
  indexHints: boolean;
  /**
   * Hot rows (a job being read) may be served from this process's memory, invalidated by its own
   * writes: embedded SQLite, whose one writer is this process. (PGlite, for tests and trials,
   * reads through, so its SQL stays exercised.)
   */
  rowCache: boolean;
}

const SQLITE_SQL: SqlCapabilities = { batchedWrites: false, totalsTable: true, commitOrderFeed: false, indexHints: true, rowCache: true };
const POSTGRES_SQL: SqlCapabilities = { batchedWrites: true, totalsTable: false, commitOrderFeed: true, indexHints: false, rowCache: false };

/** The SQL capabilities of the backend `db` (a database or a transaction of it) speaks to. */
export function sqlCapabilitiesOf(db: Kysely<any>): SqlCapabilities {
  return db.getExecutor().adapter instanceof SqliteAdapter ? SQLITE_SQL : POSTGRES_SQL;
}

export interface Capabilities extends SqlCapabilities {
  dialect: DialectName;
  /**
   * True when this process is the only writer of the database (embedded SQLite): it may keep
   * keys, counters and hot rows in memory coherently.
   */
  singleWriter: boolean;
  /** Row locks with `FOR UPDATE SKIP LOCKED` are available. */
  skipLocked: boolean;
  /**
   * The driver keeps named statements per connection (node-postgres): a hot query sent by name
   * is parsed and planned once per connection instead of on every call (db/prepared.ts).
   */
  namedStatements?: boolean;
  /**
   * Several statements per round trip on one connection (PostgreSQL server): the batched money
   * paths send theirs in pipelines (db/pg-pipeline.ts, db/batch-transaction.ts).
   */
  pipelines?: Pipelines;
}

/** Connections of this process's pool right now (/metrics: db_pool_*). */
export interface PoolStats {
  /** Connections the pool may hold (1 for the single connection of SQLite and PGlite). */
  max: number;
  /** Connections checked out: running a query or holding a transaction. */
  inUse: number;
  /** Callers waiting for a connection. */
  waiting: number;
}

export interface DatabaseHandle {
  db: Kysely<Database>;
  caps: Capabilities;
  /** The URL the database was opened with (a LISTEN connection of its own needs it). */
  url: string;
  /** The pool's use now: read when /metrics is scraped. */
  poolStats(): PoolStats;
  close(): Promise<void>;
}

/**
 * Counts the connections a single-connection driver (SQLite, PGlite) has handed out and the
 * callers waiting for one: Kysely's drivers keep that in a private mutex.
 */
function countingDriver(driver: Driver, stats: PoolStats): Driver {
  return new Proxy(driver, {
    get(target, prop) {
      if (prop === 'acquireConnection') {
        return async () => {
          stats.waiting++;
          let connection: DatabaseConnection;
          try {
            connection = await target.acquireConnection();
          } finally {
            stats.waiting--;
          }
          stats.inUse++;
          return connection;
        };
      }
      if (prop === 'releaseConnection') {
        return async (connection: DatabaseConnection) => {
          try {
            await target.releaseConnection(connection);
          } finally {
            stats.inUse--;
          }
        };
      }
      const value = Reflect.get(target, prop, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** `dialect` with its driver counted (countingDriver). */
function countingDialect(dialect: Dialect, stats: PoolStats): Dialect {
  return {
    createDriver: () => countingDriver(dialect.createDriver(), stats),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
  };
}

/**
 * The pg driver and the pipelines built on it, loaded when a PostgreSQL server is first opened
 * (a process on SQLite or PGlite never loads them).
 */
async function loadPostgresDriver() {
  const [{ default: pg }, { Pipelines }] = await Promise.all([import('pg'), import('./pg-pipeline.js')]);
  // int8 and numeric arrive from pg as strings; every such column here is an integer within 2^53.
  pg.types.setTypeParser(20, (v) => Number(v));
  pg.types.setTypeParser(1700, (v) => Number(v));
  return { pg, Pipelines };
}

/** How long a PostgreSQL query waits for a pooled connection at most (then it fails as unavailable). */
export const CONNECT_TIMEOUT_MS = 5_000;

export interface OpenOptions {
  poolMax?: number;
  /** PGlite only: start from this data directory dump (`dumpDataDir()`) instead of an empty cluster. */
  pgliteDataDump?: Blob;
  /** Embedded SQLite file only: WAL checkpoints on a worker thread (db/sqlite-checkpointer.ts); for servers. */
  backgroundCheckpoint?: boolean;
  /**
   * SQLite only: `normal` (default) syncs the WAL at checkpoints, so a commit survives a process
   * crash but the last ones may be lost in an OS crash or power cut; `full` syncs the WAL at every
   * commit, so an acknowledged commit survives those too (docs/operations.md, Durability).
   */
  synchronous?: 'normal' | 'full';
}

/**
 * SQLite transactions begin with BEGIN IMMEDIATE: they take the file's write lock at once,
 * waiting for it through busy_timeout. A deferred BEGIN takes it at the first write, and when
 * another process on the same file (the CLI beside a live server) committed after the
 * transaction's first read, that upgrade fails at once with SQLITE_BUSY: no wait can make a stale
 * snapshot current (test/db/sqlite-transactions.test.ts). Within a process, group commit already
 * runs one write transaction at a time, so nothing waits longer than before.
 */
class ImmediateSqliteDriver extends SqliteDriver {
  constructor(
    settings: SqliteDialectConfig,
    private readonly inTransaction: () => boolean,
  ) {
    super(settings);
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * A rollback only while a transaction is open. SQLite ends a transaction by itself on some
   * errors (SQLITE_FULL when the disk is full, SQLITE_IOERR, SQLITE_NOMEM; a failed COMMIT may
   * too): a ROLLBACK then fails with "no transaction is active", and that error would replace the
   * one that says what happened (a full disk is answered 507, lib/storage-full.ts).
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.inTransaction()) return;
    await super.rollbackTransaction(connection);
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  constructor(
    private readonly settings: SqliteDialectConfig,
    private readonly inTransaction: () => boolean,
  ) {
    super(settings);
  }

  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.settings, this.inTransaction);
  }
}

export async function openDatabase(url: string, options: OpenOptions = {}): Promise<DatabaseHandle> {
  if (url.startsWith('sqlite:')) return openSqlite(url, options);
  if (url.startsWith('pglite:')) return openPglite(url, options);
  if (url.startsWith('postgres://') || url.startsWith('postgresql://')) return openPostgres(url, options);
  throw new Error(`unsupported database URL: ${url}`);
}

/** The embedded SQLite file (WAL, one connection, the single writer). */
function openSqlite(url: string, options: OpenOptions): DatabaseHandle {
  const path = url.slice('sqlite:'.length);
  if (path !== ':memory:') mkdirSync(dirname(resolve(path)), { recursive: true });
  const sqlite = new SqliteDatabase(path === ':memory:' ? ':memory:' : resolve(path));
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma(`synchronous = ${options.synchronous === 'full' ? 'FULL' : 'NORMAL'}`);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('cache_size = -65536');
  sqlite.pragma('mmap_size = 268435456');
  sqlite.pragma('temp_store = memory');
  const statements = withStatementCache(sqlite);
  const stats: PoolStats = { max: 1, inUse: 0, waiting: 0 };
  const db = new Kysely<Database>({ dialect: countingDialect(new ImmediateSqliteDialect({ database: statements }, () => sqlite.inTransaction), stats) });
  registerSqliteStatements(db, statements);
  const checkpointer =
    options.backgroundCheckpoint && path !== ':memory:'
      ? startCheckpointer(sqlite, resolve(path), { onError: (message) => process.emitWarning(`SQLite background checkpoint failed: ${message}`) })
      : undefined;
  return {
    db,
    caps: { dialect: 'sqlite', singleWriter: true, skipLocked: false, ...SQLITE_SQL },
    url,
    poolStats: () => ({ ...stats }),
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/** PostgreSQL in this process (tests and trials): one connection, the single writer. */
async function openPglite(url: string, options: OpenOptions): Promise<DatabaseHandle> {
  const [{ PGlite }, { PGliteDialect }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('kysely-pglite-dialect'),
  ]);
  const dir = url.slice('pglite:'.length);
  const client = new PGlite({ ...(dir ? { dataDir: dir } : {}), ...(options.pgliteDataDump ? { loadDataDir: options.pgliteDataDump } : {}) });
  await client.waitReady;
  const stats: PoolStats = { max: 1, inUse: 0, waiting: 0 };
  const db = new Kysely<Database>({ dialect: countingDialect(new PGliteDialect(client), stats) });
  return {
    db,
    // PGlite is one connection inside this process: it is the single writer.
    caps: { dialect: 'postgres', singleWriter: true, skipLocked: true, ...POSTGRES_SQL },
    url,
    poolStats: () => ({ ...stats }),
    close: () => db.destroy(),
  };
}

/** A PostgreSQL server: a pool of connections (several processes may write). */
async function openPostgres(url: string, options: OpenOptions): Promise<DatabaseHandle> {
  const poolMax = options.poolMax ?? 10;
  const { pg, Pipelines } = await loadPostgresDriver();
  const pool = new pg.Pool({
    connectionString: url,
    max: poolMax,
    // A request waits this long at most for a connection (a free one, or a new one to a server
    // that does not answer), then fails as unavailable (503) instead of hanging.
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // A server that vanished without closing the socket is noticed by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  });
  // An idle client dropped by the server (restart, failover) must not crash the process;
  // the pool discards it and the next query opens a new connection.
  pool.on('error', (err) => process.emitWarning(`PostgreSQL idle client error: ${err.message}`));
  // pg-pool listens for errors only while a client is idle. A checked-out client between two
  // statements (inside a transaction, or a pipeline's) that the server drops emits 'error' with
  // nobody listening, which crashed the process on every PostgreSQL restart (57P01 "terminating
  // connection due to administrator command" as an uncaught exception). The client is broken
  // then: its next statement fails (answered 503, db/unavailable.ts) and the pool discards it on
  // release (it checks `_queryable`).
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    db,
    caps: {
      dialect: 'postgres',
      singleWriter: false,
      skipLocked: true,
      ...POSTGRES_SQL,
      namedStatements: true,
      pipelines: new Pipelines(pool),
    },
    url,
    // The pool's own counts: they include the connections the pipelines check out directly.
    poolStats: () => ({ max: poolMax, inUse: pool.totalCount - pool.idleCount, waiting: pool.waitingCount }),
    close: () => db.destroy(),
  };
}

/**
 * Kysely prepares every statement anew; compiling the SQL cost about a third of a request on
 * the job paths. Prepared statements are kept by SQL text (a bounded, least recently used set).
 * Safe because Kysely runs one statement at a time on this single connection.
 */
function withStatementCache(sqlite: SqliteDatabase.Database, max = 1000) {
  const statements = new Map<string, SqliteDatabase.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(text: string) {
      let stmt = statements.get(text);
      if (stmt) {
        statements.delete(text);
      } else {
        stmt = sqlite.prepare(text);
        if (statements.size >= max) statements.delete(statements.keys().next().value!);
      }
      statements.set(text, stmt);
      return stmt;
    },
  };
}

const provider: MigrationProvider = { getMigrations: async () => migrations };

/** Applies every pending migration; throws with the failing migration's name on error. */
export async function migrateToLatest(db: Kysely<Database>): Promise<void> {
  const migrator = new Migrator({ db, provider });
  const { error, results } = await migrator.migrateToLatest();
  if (error) {
    const failed = results?.find((r) => r.status === 'Error');
    throw new Error(`migration ${failed?.migrationName ?? '?'} failed: ${String((error as Error).message ?? error)}`);
  }
}

/** True when every known migration has been applied (for /readyz). */
export async function isMigrated(db: Kysely<Database>): Promise<boolean> {
  const migrator = new Migrator({ db, provider });
  const all = await migrator.getMigrations();
  return all.every((m) => m.executedAt !== undefined);
}
