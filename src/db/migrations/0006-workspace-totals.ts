/**
 * Embedded SQLite only: per-workspace running totals that admission and claiming read every
 * time: waiting (pending) and running (processing) jobs and the sum of open credit holds.
 * Counting them from the rows cost O(queue) per admission and per claim (a count over the
 * workspace's jobs, a sum over every open hold), which grew with the very queue it guards.
 * Triggers keep the totals in the same transaction as every change of a job's status or a hold,
 * whichever code path makes it, so they are exactly as consistent as the rows.
 *
 * Not on PostgreSQL: there several transactions run at once, and a totals row written by every
 * admission, claim, cancel and settlement would be one more lock taken in different orders by
 * them (measured: deadlocks between admission, which locks the workspace first, and a finishing
 * job, which would touch the totals before settlement locks the workspace). PostgreSQL counts
 * from the rows through partial indexes instead (store functions check the dialect).
 *
 * Also an index answering "which result does this job hold" (complete-output pages) without
 * reading the row: SQLite keeps the digest column behind a result of up to 16 MiB in overflow
 * pages, and every page of a paginated read walked them (milliseconds per page).
 */
import { sql, SqliteAdapter, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof SqliteAdapter)) return;
  await db.schema
    .createTable('workspace_totals')
    .addColumn('workspace_id', 'text', (c) => c.primaryKey())
    .addColumn('pending_jobs', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('processing_jobs', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('open_hold_mc', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`
    insert into workspace_totals (workspace_id, pending_jobs, processing_jobs, open_hold_mc)
    select w.id,
      (select count(*) from jobs j where j.workspace_id = w.id and j.status = 'pending'),
      (select count(*) from jobs j where j.workspace_id = w.id and j.status = 'processing'),
      coalesce((select sum(h.amount_mc) from credit_holds h where h.workspace_id = w.id and h.released_at_ms is null), 0)
    from workspaces w`.execute(db);
  await sql`create index jobs_output_head_idx on jobs (id, workspace_id, output_sha256)`.execute(db);

  // Each change adds its delta with an upsert (a workspace's row appears with its first job).
  const add = (ws: string, pending: string, processing: string, held: string) =>
    `insert into workspace_totals (workspace_id, pending_jobs, processing_jobs, open_hold_mc) values (${ws}, ${pending}, ${processing}, ${held})
     on conflict (workspace_id) do update set pending_jobs = pending_jobs + excluded.pending_jobs,
       processing_jobs = processing_jobs + excluded.processing_jobs, open_hold_mc = open_hold_mc + excluded.open_hold_mc;`;
  const active = (row: string) => `${row}.status in ('pending', 'processing')`;
  const statements = [
    `create trigger jobs_totals_ins after insert on jobs when ${active('new')} begin
       ${add('new.workspace_id', "new.status = 'pending'", "new.status = 'processing'", '0')} end`,
    `create trigger jobs_totals_del after delete on jobs when ${active('old')} begin
       ${add('old.workspace_id', "-(old.status = 'pending')", "-(old.status = 'processing')", '0')} end`,
    `create trigger jobs_totals_upd after update of status on jobs when old.status <> new.status and (${active('old')} or ${active('new')}) begin
       ${add('new.workspace_id', "(new.status = 'pending') - (old.status = 'pending')", "(new.status = 'processing') - (old.status = 'processing')", '0')} end`,
    `create trigger holds_totals_ins after insert on credit_holds when new.released_at_ms is null begin ${add('new.workspace_id', '0', '0', 'new.amount_mc')} end`,
    `create trigger holds_totals_del after delete on credit_holds when old.released_at_ms is null begin ${add('old.workspace_id', '0', '0', '-old.amount_mc')} end`,
    `create trigger holds_totals_upd after update of amount_mc, released_at_ms on credit_holds begin
       ${add(
         'new.workspace_id',
         '0',
         '0',
         '(case when new.released_at_ms is null then new.amount_mc else 0 end) - (case when old.released_at_ms is null then old.amount_mc else 0 end)',
       )} end`,
  ];
  for (const s of statements) await sql.raw(s).execute(db);
}
