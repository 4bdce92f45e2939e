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
 * come from separate statements, each a few microseconds in-process (waiting jobs and open holds
 * from the trigger-kept totals, which PostgreSQL does not keep: migration 0006).
 */
import { sql, type Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import { findDueAllocations } from '../billing/expiry-store.js';
import { sumLiveRemaining, sumOpenHolds } from '../billing/store.js';
import { arg, prepared } from '../../db/prepared.js';
import { countPending } from '../jobs/store.js';
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

const providerKeyQuery = prepared((db) => db.selectFrom('provider_keys').select('id').where('workspace_id', '=', arg(0)).where('provider', '=', arg(1)));

/** The figures, read under the workspace lock the caller holds (db/locking.ts lockWorkspace). */
export async function readAdmissionFigures(trx: Trx, caps: Capabilities, workspaceId: string, provider: string | null, now: number): Promise<AdmissionFigures> {
  if (caps.totalsTable) {
    const [waitingJobs, own, due, live, held] = [
      await countPending(trx, workspaceId),
      provider === null ? undefined : (await providerKeyQuery(trx, workspaceId, provider)).rows[0],
      await findDueAllocations(trx, workspaceId, now),
      await sumLiveRemaining(trx, workspaceId, now),
      await sumOpenHolds(trx, workspaceId),
    ];
    return { waitingJobs, ownProviderKey: own !== undefined, dueAllocations: due.length > 0, liveMillicents: live, heldMillicents: held };
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
