/** Reads of the cost rollup (migration 0015): the sums behind GET /v1/costs and the operator's top spenders. */
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Range } from './range.js';

type Db = Kysely<Database>;

/** Attribution a cost read may group by, and the rollup column of each. */
export const GROUP_COLUMNS = { operationId: 'operation_id', keyId: 'key_id', executionOrigin: 'execution_origin' } as const;
export type GroupField = keyof typeof GROUP_COLUMNS;
export const GROUP_FIELDS = Object.keys(GROUP_COLUMNS) as GroupField[];

/** The kinds a cost read reports: everything but purchases (docs/decisions.md, what counts). */
export const COST_KINDS = ['usage', 'refund', 'debit', 'expiration'] as const;
export type CostType = (typeof COST_KINDS)[number];

export interface RollupSum {
  bucket: number;
  kind: CostType;
  /** '' where the entries have none; only the grouped fields are read. */
  groups: Partial<Record<GroupField, string>>;
  amount: number;
  entries: number;
  workspaceId?: string;
}

/** The bucket start a rollup row belongs to: the row's own for hours and days, a CASE for months. */
function bucketExpr(range: Range): RawBuilder<number> {
  if (range.bucket !== 'month') return sql<number>`bucket_ms`;
  if (range.starts.length === 1) return sql<number>`${sql.lit(range.starts[0]!)}`;
  const whens = range.starts.slice(1).map((s, i) => sql`when bucket_ms < ${sql.lit(s)} then ${sql.lit(range.starts[i]!)}`);
  return sql<number>`case ${sql.join(whens, sql` `)} else ${sql.lit(range.starts[range.starts.length - 1]!)} end`;
}

/** Rows of live workspaces only: test twins (lib/livemode.ts) are left out of the operator's totals. */
const LIVE_ONLY = sql`workspace_id not in (select id from workspaces where live_workspace_id is not null)`;

/**
 * The rollup summed per bucket, kind and the grouped fields, over the range, for one workspace
 * (or every workspace, grouped by workspace too, when `workspaceId` is null: the operator view).
 * Hours read the hour rows; days and months read the day rows (a month is a sum of whole days).
 */
export async function sumRollup(db: Db, workspaceId: string | null, range: Range, groupBy: readonly GroupField[], byWorkspace = false): Promise<RollupSum[]> {
  const span = range.bucket === 'hour' ? 'hour' : 'day';
  const cols = groupBy.map((g) => sql.ref(GROUP_COLUMNS[g]));
  const select = [sql`${bucketExpr(range)} as b`, sql`kind`, ...groupBy.map((g) => sql`${sql.ref(GROUP_COLUMNS[g])} as ${sql.ref(g)}`)];
  const group = [sql`b`, sql`kind`, ...cols];
  if (byWorkspace) {
    select.push(sql`workspace_id`);
    group.push(sql`workspace_id`);
  }
  // Every workspace: the live ones (a test twin's make-believe money is nobody's spending).
  const where = workspaceId === null ? sql`${LIVE_ONLY} and ` : sql`workspace_id = ${workspaceId} and `;
  // One workspace's rows grouped by every attribution at their own span are unique already
  // (the primary key): read them as they are, without aggregating.
  const asStored = workspaceId !== null && !byWorkspace && range.bucket !== 'month' && groupBy.length === GROUP_FIELDS.length;
  const { rows } = asStored
    ? await sql<Record<string, unknown>>`
    select ${sql.join(select)}, amount_mc as amount, entries as n
    from cost_rollups
    where ${where}span = ${span} and bucket_ms >= ${range.from} and bucket_ms < ${range.to} and kind <> 'purchase'`.execute(db)
    : await sql<Record<string, unknown>>`
    select ${sql.join(select)}, sum(amount_mc) as amount, sum(entries) as n
    from cost_rollups
    where ${where}span = ${span} and bucket_ms >= ${range.from} and bucket_ms < ${range.to} and kind <> 'purchase'
    group by ${sql.join(group)}`.execute(db);
  const out: RollupSum[] = new Array(rows.length);
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i]!;
    const groups: Partial<Record<GroupField, string>> = {};
    for (const g of groupBy) groups[g] = String(r[g]);
    out[i] = { bucket: Number(r.b), kind: r.kind as CostType, groups, amount: Number(r.amount), entries: Number(r.n) };
    if (byWorkspace) out[i]!.workspaceId = String(r.workspace_id);
  }
  return out;
}

/** Spending (usage, positive millicents) per workspace over the range, the largest first. */
export async function topSpenders(db: Db, range: Range, limit: number): Promise<{ workspaceId: string; usage: number; net: number; entries: number }[]> {
  const span = range.bucket === 'hour' ? 'hour' : 'day';
  const { rows } = await sql<{ workspace_id: string; usage: unknown; net: unknown; n: unknown }>`
    select workspace_id,
      sum(case when kind = 'usage' then amount_mc else 0 end) as usage,
      sum(amount_mc) as net,
      sum(case when kind = 'usage' then entries else 0 end) as n
    from cost_rollups
    where ${LIVE_ONLY} and span = ${span} and bucket_ms >= ${range.from} and bucket_ms < ${range.to} and kind <> 'purchase'
    group by workspace_id
    order by sum(case when kind = 'usage' then amount_mc else 0 end) asc, workspace_id asc
    limit ${limit}`.execute(db);
  return rows.map((r) => ({ workspaceId: r.workspace_id, usage: 0 - Number(r.usage), net: 0 - Number(r.net), entries: Number(r.n) }));
}
