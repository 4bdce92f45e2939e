/** SQL for credit expiry: due allocations, the holds they may back, and the sweep's workspace list. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

/** An allocation past its expiry that still holds credits. */
export interface DueAllocation {
  id: string;
  remaining: number;
  expiresAt: number;
  /** Set once its expiry was processed (what remains then backs older holds). */
  expirySettledAt: number | null;
}

/** An open hold as far as expiry cares: when it was admitted and how much it may still spend. */
export interface OpenHoldAmount {
  createdAt: number;
  amount: number;
}

// `remaining_mc > 0` is written as a literal: SQLite re-plans a statement on every call when a
// bound value meets a term it could weigh against a partial index. Due allocations are found
// through credit_allocations_expiry_idx (expiring allocations, migration 0008).
const HAS_CREDITS = sql<boolean>`remaining_mc > 0`;

const findDueQuery = prepared((db) =>
  db
    .selectFrom('credit_allocations')
    .select(['id', 'remaining_mc', 'expires_at_ms', 'expiry_settled_at_ms'])
    .where('workspace_id', '=', arg(0))
    .where(HAS_CREDITS)
    .where('expires_at_ms', '<=', arg(1))
    .orderBy('expires_at_ms')
    .orderBy('id'),
);

/** Due allocations of one workspace, earliest expiry first (the order settlement spends them). */
export async function findDueAllocations(db: Db, workspaceId: string, now: number): Promise<DueAllocation[]> {
  const { rows } = await findDueQuery(db, workspaceId, now);
  return rows.map((r) => ({
    id: r.id,
    remaining: Number(r.remaining_mc),
    expiresAt: Number(r.expires_at_ms),
    expirySettledAt: r.expiry_settled_at_ms === null ? null : Number(r.expiry_settled_at_ms),
  }));
}

/** Open holds of the workspace, oldest first. */
export async function findOpenHoldAmounts(db: Db, workspaceId: string): Promise<OpenHoldAmount[]> {
  const rows = await db
    .selectFrom('credit_holds')
    .select(['created_at_ms', 'amount_mc'])
    .where('workspace_id', '=', workspaceId)
    .where('released_at_ms', 'is', null)
    .orderBy('created_at_ms')
    .execute();
  return rows.map((r) => ({ createdAt: Number(r.created_at_ms), amount: Number(r.amount_mc) }));
}

/**
 * Lowers a due allocation to `keep` and marks its expiry processed, if it still holds exactly
 * `expectedRemaining` (a concurrent writer changed it otherwise: the caller skips it).
 */
export async function settleAllocationExpiry(db: Db, id: string, expectedRemaining: number, keep: number, now: number): Promise<boolean> {
  const r = await db
    .updateTable('credit_allocations')
    .set((eb) => ({ remaining_mc: keep, expiry_settled_at_ms: eb.fn.coalesce('expiry_settled_at_ms', eb.val(now)) }))
    .where('id', '=', id)
    .where('remaining_mc', '=', expectedRemaining)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Workspaces with a due allocation whose expiry was not processed yet (the sweep's work list). */
export async function findWorkspacesWithUnsettledDue(db: Db, now: number, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('credit_allocations')
    .select('workspace_id')
    .distinct()
    .where(HAS_CREDITS)
    .where('expires_at_ms', '<=', now)
    .where('expiry_settled_at_ms', 'is', null)
    .limit(limit)
    .execute();
  return rows.map((r) => r.workspace_id);
}
