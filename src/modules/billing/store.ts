/** SQL for credit allocations and the append-only transaction ledger. */
import type { ExpressionBuilder, Kysely, Transaction } from 'kysely';
import { sqlCapabilitiesOf } from '../../db/connect.js';
import type { Database, Row } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';
import { addToRollup } from '../costs/rollup.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface Allocation {
  id: string;
  workspaceId: string;
  amountMillicents: number;
  remainingMillicents: number;
  expiresAt: number | null;
  provenance: string;
  createdAt: number;
}

export interface LedgerEntry {
  id: string;
  workspaceId: string;
  type: string;
  amountMillicents: number;
  allocationId: string | null;
  keyId: string | null;
  toolSlug: string | null;
  /** The operation a job's entry paid for (migration 0015); null or absent for entries of no job. */
  operationId?: string | null;
  jobId: string | null;
  executionOrigin: string | null;
  createdAt: number;
  /** Operator adjustments only: why, and the provenance the operator named. */
  reason?: string | null;
  provenance?: string | null;
}

function toAllocation(r: Row<'credit_allocations'>): Allocation {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    amountMillicents: Number(r.amount_mc),
    remainingMillicents: Number(r.remaining_mc),
    expiresAt: r.expires_at_ms === null ? null : Number(r.expires_at_ms),
    provenance: r.provenance,
    createdAt: Number(r.created_at_ms),
  };
}

export function toEntry(r: Row<'credit_transactions'>): LedgerEntry {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    type: r.type,
    amountMillicents: Number(r.amount_mc),
    allocationId: r.allocation_id,
    keyId: r.key_id,
    toolSlug: r.tool_slug,
    operationId: r.operation_id ?? null,
    jobId: r.job_id,
    executionOrigin: r.execution_origin,
    createdAt: Number(r.created_at_ms),
    reason: r.reason ?? null,
    provenance: r.provenance ?? null,
  };
}

export async function insertAllocation(db: Db, a: Allocation): Promise<void> {
  await db
    .insertInto('credit_allocations')
    .values({
      id: a.id,
      workspace_id: a.workspaceId,
      amount_mc: a.amountMillicents,
      remaining_mc: a.remainingMillicents,
      expires_at_ms: a.expiresAt,
      provenance: a.provenance,
      created_at_ms: a.createdAt,
    })
    .execute();
}

/** The columns of a ledger row that ledgerRow fills (batched inserts name them in this order). */
export const LEDGER_COLUMNS = ['id', 'workspace_id', 'type', 'amount_mc', 'allocation_id', 'key_id', 'tool_slug', 'job_id', 'execution_origin', 'created_at_ms', 'operation_id'] as const;

const appendLedgerQuery = prepared((db) => db.insertInto('credit_transactions').values(Object.fromEntries(LEDGER_COLUMNS.map((c, i) => [c, arg(i)])) as never));

/** What a job's `usage` entry names: the job, its key, tool, operation and origin. */
export interface UsageSource {
  workspaceId: string;
  jobId: string;
  keyId: string | null;
  toolSlug: string;
  operationId?: string | null;
  executionOrigin: string | null;
}

/**
 * The `usage` entry of a job's settlement: minus what was charged, attributed to the job's key
 * and operation. The one builder of both settlement paths (reservations/service.ts one by one,
 * jobs/finish-batch.ts batched).
 */
export function usageEntry(job: UsageSource, chargedMillicents: number, id: string, now: number): LedgerEntry {
  return {
    id,
    workspaceId: job.workspaceId,
    type: 'usage',
    amountMillicents: -chargedMillicents,
    allocationId: null,
    keyId: job.keyId,
    toolSlug: job.toolSlug,
    operationId: job.operationId ?? null,
    jobId: job.jobId,
    executionOrigin: job.executionOrigin,
    createdAt: now,
  };
}

/** A ledger entry as its row (the adjustment columns, reason and provenance, left out). */
export function ledgerRow(e: LedgerEntry): Pick<Row<'credit_transactions'>, (typeof LEDGER_COLUMNS)[number]> {
  return {
    id: e.id,
    workspace_id: e.workspaceId,
    type: e.type,
    amount_mc: e.amountMillicents,
    allocation_id: e.allocationId,
    key_id: e.keyId,
    tool_slug: e.toolSlug,
    job_id: e.jobId,
    execution_origin: e.executionOrigin,
    created_at_ms: e.createdAt,
    operation_id: e.operationId ?? null,
  };
}

/** The entry as the cost rollup (modules/costs) counts it. */
function rollupSource(row: ReturnType<typeof ledgerRow>) {
  const { workspace_id, type, amount_mc, operation_id, key_id, execution_origin, created_at_ms } = row;
  return { workspace_id, type, amount_mc, operation_id, key_id, execution_origin, created_at_ms };
}

/** Appends a ledger entry and adds it to the cost rollup, in the caller's transaction. */
export async function appendLedger(db: Db, e: LedgerEntry): Promise<void> {
  const row = ledgerRow(e);
  await appendLedgerQuery(db, ...LEDGER_COLUMNS.map((c) => row[c]));
  await addToRollup(db, [rollupSource(row)]);
}

/** A granted allocation and its `purchase` ledger entry, in the caller's transaction. */
export async function insertGrant(db: Db, a: Allocation, entryId: string): Promise<void> {
  await insertAllocation(db, a);
  await appendLedger(db, { id: entryId, workspaceId: a.workspaceId, type: 'purchase', amountMillicents: a.amountMillicents, allocationId: a.id, keyId: null, toolSlug: null, jobId: null, executionOrigin: null, createdAt: a.createdAt });
}

/** A ledger entry with the adjustment columns (reason, provenance) the hot-path insert leaves out. */
export async function appendAdjustmentEntry(db: Db, e: LedgerEntry & { reason: string; provenance: string }): Promise<void> {
  const row = ledgerRow(e);
  await db
    .insertInto('credit_transactions')
    .values({ ...row, reason: e.reason, provenance: e.provenance })
    .execute();
  await addToRollup(db, [rollupSource(row)]);
}

/** Sum of remaining credits over every allocation of the workspace, expired or not (= the ledger sum). */
export async function sumRemaining(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('credit_allocations')
    .select((eb) => eb.fn.sum<number>('remaining_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

/**
 * Credits of allocations not expired at `now`: unexpired ones, plus what expiry kept of due ones
 * for the holds admitted before they expired (billing/expiry.ts). A due allocation whose expiry
 * was not processed yet does not count; every reader of the total processes expiry first.
 */
function isLive(now: number) {
  return (eb: ExpressionBuilder<Database, 'credit_allocations'>) =>
    eb.or([eb('expires_at_ms', 'is', null), eb('expires_at_ms', '>', now), eb('expiry_settled_at_ms', 'is not', null)]);
}

const sumLiveQuery = prepared((db) =>
  db
    .selectFrom('credit_allocations')
    .select((eb) => eb.fn.sum<number>('remaining_mc').as('total'))
    .where('workspace_id', '=', arg(0))
    .where(isLive(arg(1))),
);

/** Sum of remaining credits over allocations that have not expired at `now` (see isLive). */
export async function sumLiveRemaining(db: Db, workspaceId: string, now: number): Promise<number> {
  const { rows } = await sumLiveQuery(db, workspaceId, now);
  return Number(rows[0]?.total ?? 0);
}

/** Live allocations (credits left, not expired; see isLive), oldest first, after the id `afterId`. */
export async function pageLiveAllocations(db: Db, workspaceId: string, now: number, afterId: string | undefined, limit: number): Promise<Allocation[]> {
  let q = db
    .selectFrom('credit_allocations')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('remaining_mc', '>', 0)
    .where(isLive(now));
  if (afterId) q = q.where('id', '>', afterId);
  const rows = await q.orderBy('id', 'asc').limit(limit).execute();
  return rows.map(toAllocation);
}

/** Ledger entries oldest first (id order), after the id `afterId`, within `range`: the CSV export's chunks. */
export async function ledgerAscending(db: Db, workspaceId: string, afterId: string | null, limit: number, range: LedgerRange = {}): Promise<LedgerEntry[]> {
  let q = db.selectFrom('credit_transactions').selectAll().where('workspace_id', '=', workspaceId);
  if (range.from !== undefined) q = q.where('created_at_ms', '>=', range.from);
  if (range.to !== undefined) q = q.where('created_at_ms', '<', range.to);
  if (afterId !== null) q = q.where('id', '>', afterId);
  const rows = await q.orderBy('id', 'asc').limit(limit).execute();
  return rows.map(toEntry);
}

/** A time range of ledger entries ([from, to), either end open). */
export interface LedgerRange {
  from?: number | undefined;
  to?: number | undefined;
}

/** Ledger entries newest first, before the id `beforeId`, created within `range` when given. */
export async function pageLedger(db: Db, workspaceId: string, beforeId: string | undefined, limit: number, range: LedgerRange = {}): Promise<LedgerEntry[]> {
  let q = db.selectFrom('credit_transactions').selectAll().where('workspace_id', '=', workspaceId);
  if (range.from !== undefined) q = q.where('created_at_ms', '>=', range.from);
  if (range.to !== undefined) q = q.where('created_at_ms', '<', range.to);
  if (beforeId) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toEntry);
}

export async function sumLedger(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('credit_transactions')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

/** Credits spent (positive number) by usage transactions in [from, to), for a key or the whole workspace. */
export async function sumSpent(db: Db, workspaceId: string, keyId: string | null, from: number, to: number): Promise<number> {
  let q = db
    .selectFrom('credit_transactions')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', 'usage')
    .where('created_at_ms', '>=', from)
    .where('created_at_ms', '<', to);
  if (keyId) q = q.where('key_id', '=', keyId);
  const r = await q.executeTakeFirst();
  // 0 − x rather than −x: no rows must give 0, not −0.
  return 0 - Number(r?.total ?? 0);
}

/**
 * Credits spent (positive number) by one key's usage transactions in [from, to), across every
 * workspace: a key's budget ceilings cover the key, wherever it spends.
 */
export async function sumKeySpent(db: Db, keyId: string, from: number, to: number): Promise<number> {
  const r = await db
    .selectFrom('credit_transactions')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('key_id', '=', keyId)
    .where('type', '=', 'usage')
    .where('created_at_ms', '>=', from)
    .where('created_at_ms', '<', to)
    .executeTakeFirst();
  return 0 - Number(r?.total ?? 0);
}

/** Credits held by one key's open reservations, across every workspace. */
export async function sumKeyOpenHolds(db: Db, keyId: string): Promise<number> {
  const r = await db
    .selectFrom('credit_holds')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('key_id', '=', keyId)
    .where('released_at_ms', 'is', null)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}

const openHoldTotalQuery = prepared((db) => db.selectFrom('workspace_totals').select('open_hold_mc').where('workspace_id', '=', arg(0)));

/** Credits held by open reservations, for the workspace or one key of it. */
export async function sumOpenHolds(db: Db, workspaceId: string, keyId: string | null = null): Promise<number> {
  if (!keyId && sqlCapabilitiesOf(db).totalsTable) {
    // SQLite keeps it by triggers in the same transaction as every hold change (migration 0006): O(1).
    const t = (await openHoldTotalQuery(db, workspaceId)).rows[0];
    return Number(t?.open_hold_mc ?? 0);
  }
  let q = db
    .selectFrom('credit_holds')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .where('released_at_ms', 'is', null);
  if (keyId) q = q.where('key_id', '=', keyId);
  const r = await q.executeTakeFirst();
  return Number(r?.total ?? 0);
}
