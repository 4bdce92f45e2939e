/**
 * Cost analytics (issue 36). Ledger entries carry the operation they paid for (`operation_id`,
 * beside the `key_id` they already had), backfilled from their jobs; and `cost_rollups` holds the
 * ledger summed per workspace, UTC hour, kind and attribution, written in the same transaction as
 * every ledger entry (src/modules/costs/rollup.ts), so that day and month figures are sums of
 * hours and agree with the ledger to the millicent.
 *
 * A rollup row's key: workspace, `span` ('hour' or 'day': every entry is counted once in each),
 * `bucket_ms` (the start of the entries' UTC hour, or day), `kind` (the ledger type, with `adjustment` split into `refund` for a
 * positive amount and `debit` for a negative one), `operation_id`, `key_id` and
 * `execution_origin` ('' when the entry has none: key columns cannot be null). `amount_mc` is the
 * signed sum of the entries' amounts and `entries` their number.
 *
 * Also `usage_history` (GET /v1/usage/history; modules/usage/history.ts): usage points and 429
 * refusals per workspace, span ('minute', 'hour', 'day'), bucket, key, operation and kind
 * (`points` or `429:<details.limit>`).
 *
 * On SQLite both tables are WITHOUT ROWID: the rows live in their primary key's b-tree, so a
 * read of a range of buckets is one sequential walk instead of an index walk plus a lookup of
 * every row (half the time of a month's read in bench/costs.ts). Otherwise no dialect-specific SQL.
 */
import { sql, SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  const clustered = db.getExecutor().adapter instanceof SqliteAdapter ? sql`without rowid` : sql``;
  await db.schema.alterTable('credit_transactions').addColumn('operation_id', 'text').execute();
  // Attribution of the entries written before: the job's operation, and its key where the entry had none.
  await sql`update credit_transactions set operation_id = (select j.operation_id from jobs j where j.id = credit_transactions.job_id)
    where job_id is not null`.execute(db);
  await sql`update credit_transactions set key_id = (select j.key_id from jobs j where j.id = credit_transactions.job_id)
    where key_id is null and job_id is not null`.execute(db);

  await db.schema
    .createTable('cost_rollups')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('span', 'text', (c) => c.notNull())
    .addColumn('bucket_ms', 'bigint', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('execution_origin', 'text', (c) => c.notNull())
    .addColumn('amount_mc', 'bigint', (c) => c.notNull())
    .addColumn('entries', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('cost_rollups_pk', ['workspace_id', 'span', 'bucket_ms', 'kind', 'operation_id', 'key_id', 'execution_origin'])
    .modifyEnd(clustered)
    .execute();
  // Operator reads across workspaces (top spenders) scan a time range first.
  await db.schema.createIndex('cost_rollups_time_idx').on('cost_rollups').columns(['span', 'bucket_ms', 'workspace_id']).execute();

  for (const [span, ms] of [['hour', 3_600_000], ['day', 86_400_000]] as const) {
    await sql`insert into cost_rollups (workspace_id, span, bucket_ms, kind, operation_id, key_id, execution_origin, amount_mc, entries)
    select workspace_id, ${sql.lit(span)}, b, k, o, kk, e, sum(amount_mc), count(*) from (
      select workspace_id,
        created_at_ms - (created_at_ms % ${sql.lit(ms)}) as b,
        case when type = 'adjustment' and amount_mc > 0 then 'refund' when type = 'adjustment' then 'debit' else type end as k,
        coalesce(operation_id, '') as o, coalesce(key_id, '') as kk, coalesce(execution_origin, '') as e, amount_mc
      from credit_transactions) t
    group by workspace_id, b, k, o, kk, e`.execute(db);
  }

  await db.schema
    .createTable('usage_history')
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('span', 'text', (c) => c.notNull())
    .addColumn('bucket_ms', 'bigint', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('operation', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('count', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('usage_history_pk', ['workspace_id', 'span', 'bucket_ms', 'key_id', 'operation', 'kind'])
    .modifyEnd(clustered)
    .execute();
  await db.schema.createIndex('usage_history_prune_idx').on('usage_history').columns(['span', 'bucket_ms']).execute();
}
