/**
 * The cost rollup (migration 0015): the ledger summed per workspace, UTC hour (and UTC day), kind
 * and attribution (operation, key, execution origin). Every writer of a ledger entry adds the
 * entry here in the same transaction (billing/store.ts appendLedger and appendAdjustmentEntry; the
 * batched finishes of jobs/finish-batch-store.ts, under the workspace lock), so for any workspace
 * and any whole hours the rollup's sums equal the ledger's, and each day row equals the sum of its
 * 24 hour rows: the cost reads rely on both, and test/money/costs-property.test.ts checks them.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** The spans the rollup keeps; a month is a sum of days. */
export const SPANS = { hour: HOUR_MS, day: DAY_MS } as const;
export type Span = keyof typeof SPANS;

/** What a rollup row counts: the ledger type, an operator adjustment split by its sign. */
export type CostKind = 'purchase' | 'usage' | 'expiration' | 'refund' | 'debit';

export function kindOf(type: string, amountMillicents: number): CostKind {
  if (type === 'adjustment') return amountMillicents > 0 ? 'refund' : 'debit';
  return type as CostKind;
}

/** The start of the UTC hour (or day) holding `ms`. */
export function floorTo(ms: number, unit: number): number {
  return ms - (((ms % unit) + unit) % unit);
}

/** A ledger entry as the rollup sees it (column names of credit_transactions). */
export interface RollupSource {
  workspace_id: string;
  type: string;
  amount_mc: number;
  operation_id: string | null;
  key_id: string | null;
  execution_origin: string | null;
  created_at_ms: number;
}

export interface RollupRow {
  workspace_id: string;
  span: Span;
  bucket_ms: number;
  kind: CostKind;
  operation_id: string;
  key_id: string;
  execution_origin: string;
  amount_mc: number;
  entries: number;
}

/** The rollup rows a set of ledger entries adds, one per key (an upsert may touch a row once). */
export function rollupRowsOf(entries: readonly RollupSource[]): RollupRow[] {
  const rows = new Map<string, RollupRow>();
  for (const e of entries) {
    for (const span of ['hour', 'day'] as const) {
      const row: RollupRow = {
        workspace_id: e.workspace_id,
        span,
        bucket_ms: floorTo(Number(e.created_at_ms), SPANS[span]),
        kind: kindOf(e.type, Number(e.amount_mc)),
        operation_id: e.operation_id ?? '',
        key_id: e.key_id ?? '',
        execution_origin: e.execution_origin ?? '',
        amount_mc: Number(e.amount_mc),
        entries: 1,
      };
      const k = JSON.stringify([row.workspace_id, span, row.bucket_ms, row.kind, row.operation_id, row.key_id, row.execution_origin]);
      const seen = rows.get(k);
      if (seen) {
        seen.amount_mc += row.amount_mc;
        seen.entries += 1;
      } else rows.set(k, row);
    }
  }
  return [...rows.values()];
}

const addQuery = prepared((db) =>
  db
    .insertInto('cost_rollups')
    .values({
      workspace_id: arg(0),
      span: arg(1),
      bucket_ms: arg(2),
      kind: arg(3),
      operation_id: arg(4),
      key_id: arg(5),
      execution_origin: arg(6),
      amount_mc: arg(7),
      entries: arg<number>(8),
    })
    .onConflict((oc) =>
      oc.columns(['workspace_id', 'span', 'bucket_ms', 'kind', 'operation_id', 'key_id', 'execution_origin']).doUpdateSet({
        amount_mc: sql`cost_rollups.amount_mc + excluded.amount_mc`,
        entries: sql`cost_rollups.entries + excluded.entries`,
      }),
    ),
);

/** Adds ledger entries to the rollup, inside the transaction that writes them. */
export async function addToRollup(db: Db, entries: readonly RollupSource[]): Promise<void> {
  for (const r of rollupRowsOf(entries)) {
    await addQuery(db, r.workspace_id, r.span, r.bucket_ms, r.kind, r.operation_id, r.key_id, r.execution_origin, r.amount_mc, r.entries);
  }
}

/**
 * The same upsert on PostgreSQL as one statement over a JSON array of rollup rows (the batched
 * finishes' CTE, jobs/finish-batch-store.ts); the rows must have distinct keys (rollupRowsOf).
 */
export function addRollupRowsSql(rowsJson: string) {
  return sql`insert into cost_rollups (workspace_id, span, bucket_ms, kind, operation_id, key_id, execution_origin, amount_mc, entries)
    select workspace_id, span, bucket_ms, kind, operation_id, key_id, execution_origin, amount_mc, entries
    from json_populate_recordset(null::cost_rollups, ${rowsJson}::json)
    on conflict (workspace_id, span, bucket_ms, kind, operation_id, key_id, execution_origin)
    do update set amount_mc = cost_rollups.amount_mc + excluded.amount_mc, entries = cost_rollups.entries + excluded.entries
    returning 1`;
}
