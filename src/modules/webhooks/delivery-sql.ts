/**
 * Precompiled statements of the delivery worker's hot path (claim, its two reads, the batched
 * success write). Building and compiling these with Kysely cost more CPU per delivery than
 * SQLite needs to run them; each is built once per dialect (and per list length, for the
 * statements with an IN list or one fencing term per row) with placeholder arguments, the same
 * way as src/db/prepared.ts, and a call only swaps the parameters. The SQL is exactly
 * what the query builder produces, so typing and dialect handling stay Kysely's.
 */
import { sql, type Compilable, type Kysely, type QueryResult, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Lists longer than this are compiled per call (never on the worker's path: batches are smaller). */
const MAX_CACHED_LENGTH = 256;

/** One precompiled statement per list length `n`, made on first use. */
function byLength<R>(build: (db: Db, n: number) => Compilable<R>) {
  const cache = new Map<number, (db: Db, ...args: unknown[]) => Promise<QueryResult<R>>>();
  return (n: number) => {
    let run = cache.get(n);
    if (!run) {
      run = prepared<R>((db) => build(db, n));
      if (n <= MAX_CACHED_LENGTH) cache.set(n, run);
    }
    return run;
  };
}

const args = (from: number, n: number) => Array.from({ length: n }, (_, i) => arg(from + i));

/**
 * The claim: args (owner, leaseExpiresAtMs, now, limit). `locked` adds FOR UPDATE SKIP LOCKED to
 * the candidate select (PostgreSQL: concurrent workers take disjoint batches).
 */
function claimQuery(locked: boolean) {
  return prepared((db) => {
    let due = db
      .selectFrom('webhook_deliveries')
      .select('id')
      .where('status', '=', 'pending')
      .where('next_attempt_at_ms', '<=', arg(2))
      .orderBy('next_attempt_at_ms')
      .orderBy('id')
      .limit(arg(3));
    if (locked) due = due.forUpdate().skipLocked();
    return db
      .updateTable('webhook_deliveries')
      .set((eb) => ({
        status: 'delivering',
        lease_token: eb('lease_token', '+', 1),
        lease_owner: arg(0),
        lease_expires_at_ms: arg(1),
        updated_at_ms: arg(2),
      }))
      .where('id', 'in', due)
      .where('status', '=', 'pending')
      .returning(['id', 'workspace_id', 'webhook_id', 'event_id', 'attempts', 'replay_count', 'lease_token']);
  });
}

export const claimDue = claimQuery(false);
export const claimDueSkipLocked = claimQuery(true);

/** The events of a claimed batch: args are their ids. */
export const selectEvents = byLength((db, n) =>
  db.selectFrom('events').select(['id', 'type', 'workspace_id', 'created_at_ms', 'data_json']).where('id', 'in', args(0, n)),
);

/** Webhooks with the workspace in which their hostname is verified now (if any): args are their ids. */
export const selectWebhookStates = byLength((db, n) =>
  db
    .selectFrom('webhooks as w')
    .leftJoin('domains as dm', (join) => join.onRef('dm.hostname', '=', 'w.hostname').on('dm.status', '=', 'verified'))
    .select(['w.id', 'w.workspace_id', 'w.url', 'w.hostname', 'w.enabled', 'w.revoked_at_ms', 'w.secret_enc', 'dm.workspace_id as verified_workspace_id'])
    .where('w.id', 'in', args(0, n)),
);

/** `(id, lease_token) in (values …)` over args from `first` on: id1, token1, id2, token2 … */
function underLease(n: number, first: number) {
  // A VALUES list: SQLite looks each id up in the primary key (an OR of n terms cost it twice as
  // much); the cast types the token column of the list for PostgreSQL.
  return sql<boolean>`(${sql.ref('id')}, ${sql.ref('lease_token')}) in (values ${sql.join(
    Array.from({ length: n }, (_, i) => sql`(${arg(first + 2 * i)}, cast(${arg(first + 2 * i + 1)} as bigint))`),
  )})`;
}

/**
 * Successful attempts of n deliveries, each row only while still `delivering` under the lease
 * token that claimed it: args (statusCode, now, id1, token1, id2, token2 …). No RETURNING (it
 * cost SQLite a third of the statement): the affected-row count tells whether every lease held.
 */
export const finishSucceededRows = byLength((db, n) =>
  db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'succeeded',
      attempts: eb('attempts', '+', 1),
      last_status_code: arg(0),
      last_error_code: null,
      delivered_at_ms: arg(1),
      updated_at_ms: arg(1),
      lease_owner: null,
      lease_expires_at_ms: null,
    }))
    .where('status', '=', 'delivering')
    .where(underLease(n, 2)),
);

/**
 * After finishSucceededRows wrote fewer rows than asked, in the same transaction: the rows it
 * wrote, i.e. `succeeded` still under the claiming token (a lost lease always has a newer token,
 * and the claiming worker writes a delivery's outcome once). Args: id1, token1, id2, token2 …
 */
export const succeededUnderLease = byLength((db, n) =>
  db.selectFrom('webhook_deliveries').select('id').where('status', '=', 'succeeded').where(underLease(n, 0)),
);
