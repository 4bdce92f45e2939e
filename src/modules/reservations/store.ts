/** SQL for holds (reservations) and spending allocations earliest-expiry first. */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';
import { inSpendingOrder, type SpendableAllocation } from './spending.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface OpenHold {
  id: string;
  workspaceId: string;
  jobId: string;
  keyId: string | null;
  amountMillicents: number;
}

/** A new open hold as its row: the one builder of both admission paths (one by one and batched). */
export function holdRow(hold: OpenHold, now: number): Row<'credit_holds'> {
  return { id: hold.id, workspace_id: hold.workspaceId, job_id: hold.jobId, key_id: hold.keyId, amount_mc: hold.amountMillicents, created_at_ms: now, released_at_ms: null };
}

/** The columns of a hold row, in holdRow's order (batched inserts name them). */
export const HOLD_COLUMNS = Object.keys(holdRow({ id: '', workspaceId: '', jobId: '', keyId: null, amountMillicents: 0 }, 0)) as (keyof Row<'credit_holds'>)[];
const insertHoldQuery = prepared((db) => db.insertInto('credit_holds').values(Object.fromEntries(HOLD_COLUMNS.map((c, i) => [c, arg(i)])) as never));

export async function insertHold(db: Db, hold: OpenHold, now: number): Promise<void> {
  const row = holdRow(hold, now);
  await insertHoldQuery(db, ...HOLD_COLUMNS.map((c) => row[c]));
}

const findOpenHoldQuery = prepared((db) => db.selectFrom('credit_holds').selectAll().where('job_id', '=', arg(0)).where('released_at_ms', 'is', null));

export async function findOpenHold(db: Db, jobId: string): Promise<(OpenHold & { createdAt: number }) | undefined> {
  const r = (await findOpenHoldQuery(db, jobId)).rows[0];
  return r && { id: r.id, workspaceId: r.workspace_id, jobId: r.job_id, keyId: r.key_id, amountMillicents: Number(r.amount_mc), createdAt: Number(r.created_at_ms) };
}

const releaseHoldQuery = prepared((db) => db.updateTable('credit_holds').set({ released_at_ms: arg(0) }).where('id', '=', arg(1)).where('released_at_ms', 'is', null));

export async function releaseHold(db: Db, holdId: string, now: number): Promise<boolean> {
  const r = await releaseHoldQuery(db, now, holdId);
  return Number(r.numAffectedRows) === 1;
}

const spendableQuery = prepared((db) =>
  db
    .selectFrom('credit_allocations')
    .select(['id', 'remaining_mc', 'expires_at_ms'])
    .where('workspace_id', '=', arg(0))
    // A literal, not a parameter: SQLite re-plans a statement on every call when a bound value
    // meets a term it could weigh against a partial index, at 3x the cost.
    .where(sql<boolean>`remaining_mc > 0`)
    .where((eb) => eb.or([eb('expires_at_ms', 'is', null), eb('expires_at_ms', '>', arg(1))])),
);

/**
 * Allocations with credits left that a hold admitted at `heldSince` may spend (those that had
 * not expired then), in spending order: earliest expiry first, never-expiring last.
 */
export async function spendableAllocations(db: Db, workspaceId: string, heldSince: number): Promise<SpendableAllocation[]> {
  const { rows } = await spendableQuery(db, workspaceId, heldSince);
  return inSpendingOrder(rows.map((r) => ({ id: r.id, remaining: Number(r.remaining_mc), expiresAt: r.expires_at_ms === null ? null : Number(r.expires_at_ms) })));
}

const debitQuery = prepared((db) =>
  db
    .updateTable('credit_allocations')
    .set((eb) => ({ remaining_mc: eb('remaining_mc', '-', arg(0)) }))
    .where('id', '=', arg(1))
    .where('remaining_mc', '>=', arg(0)),
);

export async function debitAllocation(db: Db, id: string, amount: number): Promise<void> {
  const r = await debitQuery(db, amount, id);
  if (Number(r.numAffectedRows) !== 1) throw new Error(`allocation ${id} could not be debited ${amount}`);
}
