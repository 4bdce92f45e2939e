/**
 * Group commit for a single-writer database (embedded SQLite, PGlite): write transactions that
 * arrive within a few turns of the event loop (FLUSH_TURNS) run one after another inside ONE
 * database transaction, each in its own savepoint, and commit together. Each unit still sees the
 * writes of the units before it (so admission checks stay exact: K credits admit exactly K jobs),
 * and a unit that throws is rolled back to its savepoint alone; the others commit. If the commit
 * itself fails, every unit of the batch fails with it (none of them was written). Committing is
 * most of the cost of a small write transaction on SQLite (WAL frames of every touched page), so
 * sharing it pays.
 *
 * Units must use only the transaction they are given: a query on `deps.db` inside a unit would
 * wait for the connection the batch holds.
 *
 * With several writers (PostgreSQL) a unit is its own transaction, unless the caller names a
 * batch: units of one batch name (a workspace id) that arrive together then share a transaction
 * in the same way. Their transactions all lock the same workspace row and wait for each other
 * anyway; sharing one takes the lock and the commit's WAL flush once per batch instead of once
 * per unit, which is what bounded one busy workspace's throughput. Only units that lock nothing
 * beyond that workspace may share (two such batches cannot wait for each other in a cycle).
 *
 * The rule for writers: a write on a request's or a job's hot path goes through `inTransaction`
 * (several statements that must commit together) or `inWrite` (statements that stand alone), so
 * that it shares commits on a single-writer database. `db.transaction()` directly is for the rest:
 * rare operator and owner changes (keys, webhooks, domains, settings), housekeeping, and the
 * batched money paths (db/batch-transaction.ts), which hold a connection of their own.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Deps } from '../deps.js';
import type { Database } from './schema.js';
import { directSqlite, runDirect } from './sqlite-direct.js';

export type Unit<T> = (trx: Transaction<Database>) => Promise<T>;

interface Pending {
  unit: Unit<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

/** Units per shared transaction at most (bounds how long other queries wait for the connection). */
const MAX_BATCH = 64;

/**
 * Turns of the event loop a single writer's batch waits for more units after its first one: it is
 * committed in the check phase (setImmediate) of the FLUSH_TURNS-th turn, so the poll phases of
 * the turns before it bring in the units of every request or provider answer whose I/O arrived
 * meanwhile. On an idle server a turn is a few microseconds; under load, fewer and fuller commits
 * write each touched page (WAL frame) once for more units. Measured with (p)'s 8 concurrent
 * synchronous runs on SQLite (docs/operations.md): with 1 turn a commit held about 4 units and the
 * service's main thread spent about 420 µs a run; with 3, about 7 units and about 370 µs; more
 * turns gained nothing measurable. A named batch on PostgreSQL commits in the next turn: there
 * the wait measured slower (end-to-end jobs, bench case jc).
 */
export const FLUSH_TURNS = 3;

/** Runs `fn` in the check phase of the `turns`-th turn of the event loop from now. */
function afterTurns(turns: number, fn: () => void): void {
  setImmediate(turns <= 1 ? fn : () => afterTurns(turns - 1, fn));
}

class GroupCommit {
  private queue: Pending[] = [];
  private scheduled = false;
  private running = false;

  /** `onIdle` lets the owner forget a committer with nothing queued (one per batch name). */
  constructor(
    private readonly db: Kysely<Database>,
    /** Turns of the event loop from a batch's first unit to its commit (FLUSH_TURNS). */
    private readonly turns: number,
    private readonly onIdle: () => void = () => {},
  ) {}

  submit<T>(unit: Unit<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ unit: unit as Unit<unknown>, resolve: resolve as (v: unknown) => void, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.running) return;
    this.scheduled = true;
    afterTurns(this.turns, () => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    this.running = true;
    const batch = this.queue.splice(0, MAX_BATCH);
    try {
      if (batch.length === 1) {
        const [only] = batch as [Pending];
        await this.db.transaction().execute(only.unit).then(only.resolve, only.reject);
        return;
      }
      const outcomes: { ok: boolean; value: unknown }[] = [];
      try {
        await this.db.transaction().execute(async (trx) => {
          for (const p of batch) {
            await statement(trx, 'savepoint group_unit');
            try {
              const value = await p.unit(trx);
              await statement(trx, 'release savepoint group_unit');
              outcomes.push({ ok: true, value });
            } catch (err) {
              await rollbackUnit(trx, err);
              outcomes.push({ ok: false, value: err });
            }
          }
        });
      } catch (err) {
        for (const p of batch) p.reject(err);
        return;
      }
      batch.forEach((p, i) => (outcomes[i]!.ok ? p.resolve(outcomes[i]!.value) : p.reject(outcomes[i]!.value)));
    } finally {
      this.running = false;
      if (this.queue.length > 0) this.schedule();
      else this.onIdle();
    }
  }
}

/**
 * Undoes a failed unit back to its savepoint. When that fails, the unit's failure ended the whole
 * transaction (SQLite rolls a transaction back by itself on SQLITE_FULL, SQLITE_IOERR or
 * SQLITE_NOMEM, and its savepoints with it): nothing of the batch was written, every unit fails,
 * and with the unit's own error (a full disk is answered 507), not the savepoint's "no such
 * savepoint"; no later unit runs, since it would run outside any transaction.
 */
async function rollbackUnit(trx: Transaction<Database>, unitError: unknown): Promise<void> {
  try {
    await statement(trx, 'rollback to savepoint group_unit');
    await statement(trx, 'release savepoint group_unit');
  } catch {
    throw unitError;
  }
}

/** A fixed statement of the batch: straight on embedded SQLite, through Kysely elsewhere. */
async function statement(trx: Transaction<Database>, text: string): Promise<void> {
  const direct = directSqlite(trx);
  if (direct) runDirect(direct, text, []);
  else await sql.raw(text).execute(trx);
}

const committers = new WeakMap<Kysely<Database>, Map<string, GroupCommit>>();

function committerFor(db: Kysely<Database>, batch = ''): GroupCommit {
  let byBatch = committers.get(db);
  if (!byBatch) {
    byBatch = new Map();
    committers.set(db, byBatch);
  }
  let gc = byBatch.get(batch);
  if (!gc) {
    // '' is the single writer's committer (no workspace id is empty).
    gc = new GroupCommit(db, batch === '' ? FLUSH_TURNS : 1, () => byBatch.delete(batch));
    byBatch.set(batch, gc);
  }
  return gc;
}

/**
 * Runs `unit` in a write transaction: shared with concurrent units on a single-writer database,
 * and on other databases with concurrent units of the same `batch` (see the header).
 */
export function inTransaction<T>(deps: Pick<Deps, 'db' | 'caps'>, unit: Unit<T>, batch?: string): Promise<T> {
  if (deps.caps.singleWriter) return committerFor(deps.db).submit(unit);
  if (batch !== undefined) return committerFor(deps.db, batch).submit(unit);
  return deps.db.transaction().execute(unit);
}

/**
 * For writes that need no transaction of their own (each statement stands alone): shared with
 * concurrent units on a single-writer database; with several writers the statements run on the
 * pool directly, without the two extra round trips of BEGIN and COMMIT.
 */
export function inWrite<T>(deps: Pick<Deps, 'db' | 'caps'>, unit: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  if (!deps.caps.singleWriter) return unit(deps.db);
  return committerFor(deps.db).submit(unit);
}
