/**
 * Everything admission weighs, read at once under the workspace lock: waiting jobs, whether the
 * workspace funds the operation's provider itself, whether credits are due to expire (then the
 * caller settles expiry first and reads the sums again), live credits and open holds.
 *
 * On PostgreSQL this is one read of every figure, under the workspace lock the caller took first
 * (lockAdmissionWorkspace, the first statement of the admission's transaction). Admission runs
 * under that lock, so every round trip inside it is time every other admission, claim and finish
 * of the workspace waits (five reads were five round trips). The lock must be a statement of its
 * own: a read that waits for the lock inside the same statement keeps the
 * snapshot it started with and would miss the holds the previous holder of the lock just
 * committed (READ COMMITTED takes a snapshot per statement; test/multi-process-admission.test.ts
 * admitted one job too many that way). On embedded SQLite the same figures
 * come from separate statements, each a few microseconds in-process (waiting jobs and open holds
 * from the trigger-kept totals, which PostgreSQL does not keep: migration 0006).
 */
import { sql, type Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import { lockForUpdate } from '../../db/locking.js';
import type { Database } from '../../db/schema.js';
import { findDueAllocations } from '../billing/expiry-store.js';
import { sumLiveRemaining, sumOpenHolds } from '../billing/store.js';
import { arg, prepared } from '../jobs/prepared.js';
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

/**
 * The workspace lock of a one-by-one admission, taken before anything else in its transaction,
 * the Idempotency-Key claim included: the batched path (admission-batch.ts) and every other
 * transaction that locks the workspace take it first too, so an admission holding a claim's
 * unique-index entry never waits for the workspace while another holds the workspace and waits
 * for that entry (PostgreSQL answered such a cycle "deadlock detected", a 500). On a
 * single-writer database the write transaction already holds everything: no statement.
 */
export async function lockAdmissionWorkspace(trx: Trx, caps: Capabilities, workspaceId: string): Promise<void> {
  if (caps.singleWriter) return;
  await lockForUpdate(caps, trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId)).execute();
}

/** The figures, read under the workspace lock the caller holds (lockAdmissionWorkspace). */
export async function readAdmissionFigures(trx: Trx, caps: Capabilities, workspaceId: string, provider: string | null, now: number): Promise<AdmissionFigures> {
  if (caps.dialect === 'postgres') {
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
  const [waitingJobs, own, due, live, held] = [
    await countPending(trx, workspaceId),
    provider === null ? undefined : (await providerKeyQuery(trx, workspaceId, provider)).rows[0],
    await findDueAllocations(trx, workspaceId, now),
    await sumLiveRemaining(trx, workspaceId, now),
    await sumOpenHolds(trx, workspaceId),
  ];
  return { waitingJobs, ownProviderKey: own !== undefined, dueAllocations: due.length > 0, liveMillicents: live, heldMillicents: held };
}
