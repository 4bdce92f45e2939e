/**
 * Everything admission weighs, read at once under the workspace lock: waiting jobs, whether the
 * workspace funds the operation's provider itself, whether credits are due to expire (then the
 * caller settles expiry first and reads the sums again), live credits and open holds.
 *
 * On PostgreSQL this is one read of every figure, under the workspace lock the caller took first
 * (db/locking.ts lockWorkspace, the first statement of the admission's transaction, before the
 * Idempotency-Key claim: PostgreSQL answered the opposite order, next to a batched admission that
 * locks first, with "deadlock detected"). Admission runs
 * under that lock, so every round trip inside it is time every other admission, claim and finish
 * of the workspace waits (five reads were five round trips). The lock must be a statement of its
 * own: a read that waits for the lock inside the same statement keeps the
 * snapshot it started with and would miss the holds the previous holder of the lock just
 * committed (READ COMMITTED takes a snapshot per statement; test/process/multi-process-admission.test.ts
 * admitted one job too many that way). On embedded SQLite the same figures
 * come from one statement as well, with waiting jobs and open holds read from the trigger-kept
 * totals, which PostgreSQL does not keep (migration 0006).
 */
import { sql, type Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';
import { dueCreditsSql, heldCreditsSql, liveCreditsSql, pendingJobsSql } from './figures-sql.js';

type Trx = Transaction<Database>;

export interface AdmissionFigures {
  waitingJobs: number;
  /** The workspace has its own key for the operation's provider (the job costs no credits). */
  ownProviderKey: boolean;
  /** Some allocation is past its expiry: sums are valid only after expiry is settled. */
  dueAllocations: boolean;
  liveMillicents: number;
  heldMillicents: number;
}

/**
 * SQLite: the same figures in one statement (waiting jobs and open holds from the trigger-kept
 * totals). Five statements cost about 10 µs more per admission than one in better-sqlite3's
 * calls, for the same b-tree reads.
 */
const sqliteFiguresQuery = prepared((db) =>
  db.selectNoFrom([
    sql<number>`coalesce((select pending_jobs from workspace_totals where workspace_id = ${arg(0)}), 0)`.as('pending'),
    sql<number>`exists (select 1 from provider_keys where workspace_id = ${arg(0)} and provider = ${arg(1)})`.as('own_key'),
    dueCreditsSql(arg(0), arg(2)).as('due'),
    liveCreditsSql(arg(0), arg(2)).as('live'),
    sql<number>`coalesce((select open_hold_mc from workspace_totals where workspace_id = ${arg(0)}), 0)`.as('held'),
  ]),
);

/** The figures, read under the workspace lock the caller holds (db/locking.ts lockWorkspace). */
export async function readAdmissionFigures(trx: Trx, caps: Capabilities, workspaceId: string, provider: string | null, now: number): Promise<AdmissionFigures> {
  if (caps.totalsTable) {
    const r = (await sqliteFiguresQuery(trx, workspaceId, provider, now)).rows[0]!;
    return { waitingJobs: Number(r.pending), ownProviderKey: Boolean(r.own_key), dueAllocations: Boolean(r.due), liveMillicents: Number(r.live), heldMillicents: Number(r.held) };
  }
  // Counted from the rows, in one statement: one round trip under the lock.
  const { rows } = await sql<{ pending: number; own_key: boolean; due: boolean; live: number; held: number }>`
    select
      ${pendingJobsSql(workspaceId)} as pending,
      exists (select 1 from provider_keys where workspace_id = ${workspaceId} and provider = ${provider}) as own_key,
      ${dueCreditsSql(workspaceId, now)} as due,
      ${liveCreditsSql(workspaceId, now)} as live,
      ${heldCreditsSql(workspaceId)} as held`.execute(trx);
  const r = rows[0]!;
  return { waitingJobs: Number(r.pending), ownProviderKey: r.own_key, dueAllocations: r.due, liveMillicents: Number(r.live), heldMillicents: Number(r.held) };
}
