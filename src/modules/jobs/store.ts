/** SQL for jobs and their version history. Writes by workers are fenced by the lease token. */
import { sql, type Kysely, type Transaction, type Updateable } from 'kysely';
import { sqlCapabilitiesOf, type Capabilities } from '../../db/connect.js';
import type { Database, JobStatus, JobsTable, Row } from '../../db/schema.js';
import { arg, prepared, type PreparedQuery } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;
export type JobRow = Row<'jobs'>;

import { ACTIVE_STATUSES, canChange } from './states.js';

export const JOB_COLUMNS = [
  'id', 'workspace_id', 'key_id', 'operation_id', 'tool_slug', 'status', 'execution_origin', 'funding', 'input_json', 'output_json',
  'output_sha256', 'progress', 'cost_mc', 'max_cost_mc', 'error_code', 'version', 'attempt', 'steps_total', 'steps_done',
  'checkpoint_json', 'created_at_ms', 'started_at_ms', 'completed_at_ms', 'updated_at_ms', 'run_after_ms', 'lease_token',
  'lease_owner', 'lease_expires_at_ms', 'recoveries',
] as const satisfies readonly (keyof JobsTable)[];

const insertJobQuery = prepared((db) => db.insertInto('jobs').values(Object.fromEntries(JOB_COLUMNS.map((c, i) => [c, arg(i)])) as JobRow));

export async function insertJob(db: Db, row: JobRow): Promise<void> {
  // The precompiled insert names every column; a row with other columns takes the builder.
  if (Object.keys(row).length === JOB_COLUMNS.length) await insertJobQuery(db, ...JOB_COLUMNS.map((c) => row[c]));
  else await db.insertInto('jobs').values(row).execute();
}

const findJobQuery = prepared((db) => db.selectFrom('jobs').selectAll().where('workspace_id', '=', arg(0)).where('id', '=', arg(1)));

export async function findJob(db: Db, workspaceId: string, id: string): Promise<JobRow | undefined> {
  return (await findJobQuery(db, workspaceId, id)).rows[0];
}

/** The columns a snapshot shows (snapshot.ts): GET /v1/jobs/{id} reads no more than these. */
export const JOB_READ_COLUMNS = [
  'id', 'workspace_id', 'tool_slug', 'operation_id', 'status', 'execution_origin', 'output_json', 'output_sha256', 'progress',
  'cost_mc', 'max_cost_mc', 'error_code', 'version', 'created_at_ms', 'started_at_ms', 'completed_at_ms',
] as const satisfies readonly (keyof JobsTable)[];
export type JobReadRow = Pick<JobRow, (typeof JOB_READ_COLUMNS)[number]>;

/**
 * Every write that changes what a snapshot shows bumps `version` (cost is added inside such a
 * write; heartbeats and checkpoints touch nothing shown), so these fields tell whether a job row
 * read earlier still holds. The snapshot cache (snapshot.ts) is keyed by the same fields.
 */
const JOB_PROBE_COLUMNS = ['version', 'status', 'cost_mc', 'output_sha256'] as const satisfies readonly (keyof JobsTable)[];

// Named columns (no `*`), so the named statements survive a migration that adds a column.
const readJobQuery = prepared((db) => db.selectFrom('jobs').select(JOB_READ_COLUMNS).where('workspace_id', '=', arg(0)).where('id', '=', arg(1)));
const probeJobQuery = prepared((db) => db.selectFrom('jobs').select(JOB_PROBE_COLUMNS).where('workspace_id', '=', arg(0)).where('id', '=', arg(1)));

const ROW_CACHE_MAX = 5000;
const ROW_CACHE_MAX_OUTPUT = 64 * 1024;

function keep(cache: Map<string, JobReadRow>, row: JobReadRow): void {
  if ((row.output_json?.length ?? 0) > ROW_CACHE_MAX_OUTPUT) return;
  if (cache.size >= ROW_CACHE_MAX) cache.delete(cache.keys().next().value!);
  cache.set(row.id, row);
}

/**
 * Embedded SQLite only, where this process is the one writer: job rows read for snapshots are
 * kept in memory (small results only), and every write of a job (this module and the claim
 * queries) drops the job's entry before it runs. A read that overlapped any job write is not
 * kept, since it may predate that write. Reads queue behind open write transactions on the one
 * SQLite connection, so a kept row was committed.
 */
const rowCache = new Map<string, JobReadRow>();
let jobWrites = 0;

/**
 * Elsewhere (PostgreSQL, other processes writing): rows read earlier, each used only after a
 * read of its probe columns (same workspace and job) shows it unchanged. A poll of an unchanged
 * job then transfers four short columns instead of the whole row and result.
 */
const checkedRows = new Map<string, JobReadRow>();

/** Called before every write of a job row. */
export function noteJobWrite(id: string): void {
  jobWrites++;
  rowCache.delete(id);
}

function unchanged(head: Pick<JobReadRow, (typeof JOB_PROBE_COLUMNS)[number]>, row: JobReadRow): boolean {
  return head.version === row.version && head.status === row.status && head.cost_mc === row.cost_mc && head.output_sha256 === row.output_sha256;
}

/**
 * The job as GET /v1/jobs/{id} shows it, in one read while the job does not change: the
 * statements are named where the driver keeps them (PostgreSQL plans them once per connection);
 * on embedded SQLite the row is served from memory. Another workspace's job is not found.
 */
export async function findJobForRead(db: Db, caps: Capabilities, workspaceId: string, id: string): Promise<JobReadRow | undefined> {
  if (caps.rowCache) {
    const hit = rowCache.get(id);
    if (hit) return hit.workspace_id === workspaceId ? hit : undefined;
    const before = jobWrites;
    const row = (await readJobQuery(db, workspaceId, id)).rows[0];
    if (row && before === jobWrites) keep(rowCache, row);
    return row;
  }
  const known = checkedRows.get(id);
  if (known && known.workspace_id === workspaceId) {
    const head = (await probeJobQuery.named(db, caps.namedStatements, workspaceId, id)).rows[0];
    if (!head) return undefined;
    if (unchanged(head, known)) return known;
  }
  const row = (await readJobQuery.named(db, caps.namedStatements, workspaceId, id)).rows[0];
  if (row) keep(checkedRows, row);
  return row;
}

export async function findJobById(db: Db, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
}

/** Jobs newest first, before `beforeId`. */
export async function pageJobs(db: Db, workspaceId: string, beforeId: string | undefined, limit: number): Promise<JobRow[]> {
  let q = db.selectFrom('jobs').selectAll().where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  return q.orderBy('id', 'desc').limit(limit).execute();
}

/** Waiting (pending) jobs of a workspace, from the trigger-kept totals (migration 0006): O(1). */
export async function countPending(db: Db, workspaceId: string): Promise<number> {
  return (await activeCounts(db, workspaceId)).pending;
}

const activeTotalsQuery = prepared((db) => db.selectFrom('workspace_totals').select(['pending_jobs', 'processing_jobs']).where('workspace_id', '=', arg(0)));

/**
 * Waiting and running jobs of a workspace: on SQLite from the trigger-kept totals (migration
 * 0006), O(1); on PostgreSQL counted through the partial index of active jobs.
 */
export async function activeCounts(db: Db, workspaceId: string): Promise<{ pending: number; processing: number }> {
  if (sqlCapabilitiesOf(db).totalsTable) {
    const t = (await activeTotalsQuery(db, workspaceId)).rows[0];
    return { pending: Number(t?.pending_jobs ?? 0), processing: Number(t?.processing_jobs ?? 0) };
  }
  const rows = await db
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', [sql.lit<JobStatus>('pending'), sql.lit<JobStatus>('processing')])
    .groupBy('status')
    .execute();
  const n = (status: string) => Number(rows.find((r) => r.status === status)?.n ?? 0);
  return { pending: n('pending'), processing: n('processing') };
}

/** Pending and processing jobs of a workspace, oldest first. */
/**
 * The workspace's running jobs, then its waiting jobs in the order claims take them (queue entry
 * time, then id: a retried or recovered job re-enters behind the jobs already waiting).
 */
export async function activeJobs(db: Db, workspaceId: string, limit: number): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', [...ACTIVE_STATUSES])
    .orderBy(sql`case when status = 'processing' then 0 else 1 end`)
    .orderBy('run_after_ms', 'asc')
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

/**
 * Fences out the attempt running a job without changing anything a reader sees (no new version):
 * a new lease token, while the job is still processing under `leaseToken`. False when the job
 * moved on (finished, recovered, fenced by someone else).
 */
export async function fenceJob(db: Db, id: string, leaseToken: number): Promise<boolean> {
  noteJobWrite(id);
  const r = await db
    .updateTable('jobs')
    .set((eb) => ({ lease_token: eb('lease_token', '+', 1) }))
    .where('id', '=', id)
    .where('status', '=', 'processing')
    .where('lease_token', '=', leaseToken)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Conditional update: applies `patch` (and bumps the version) only while the job is in one of
 * `from` and, when `leaseToken` is given, still holds that lease. Returns the new row or undefined.
 * `addCost` adds charged millicents to cost_mc in the same statement (a finish's settlement).
 */
export async function updateJob(
  db: Db,
  id: string,
  from: readonly JobStatus[],
  leaseToken: number | null,
  patch: Updateable<JobsTable>,
  options: { fence?: boolean; addCost?: number } = {},
): Promise<JobRow | undefined> {
  noteJobWrite(id);
  const to = patch.status as JobStatus | undefined;
  if (to !== undefined && from.some((f) => !canChange(f, to))) throw new Error(`job ${id}: ${from.join('|')} → ${to} is not a transition of jobs/states.ts`);
  const columns = (Object.keys(patch) as (keyof JobsTable)[]).filter((c) => patch[c] !== undefined);
  const fenced = options.fence === true;
  const addsCost = options.addCost !== undefined && options.addCost !== 0;
  if (addsCost && columns.includes('cost_mc')) throw new Error(`job ${id}: cost_mc is both set and added to`);
  // Few distinct shapes exist (one per caller), each compiled once.
  const shape = `${columns.join(',')}|${from.join(',')}|${leaseToken !== null}|${fenced}|${addsCost}`;
  let query = updateShapes.get(shape);
  if (!query) {
    query = prepared((d) => {
      let q = d
        .updateTable('jobs')
        .set((eb) => ({
          ...Object.fromEntries(columns.map((c, i) => [c, arg(i)])),
          version: eb('version', '+', 1),
          // Fencing: a new token means every earlier holder of the job can no longer write.
          ...(fenced ? { lease_token: eb('lease_token', '+', 1) } : {}),
          ...(addsCost ? { cost_mc: eb('cost_mc', '+', arg(columns.length + 2)) } : {}),
        }))
        .where('id', '=', arg(columns.length))
        // Literals: SQLite re-plans a statement whose bound values meet a partial index predicate.
        .where('status', 'in', from.map((s) => sql.lit(s)));
      if (leaseToken !== null) q = q.where('lease_token', '=', arg(columns.length + 1));
      return q.returningAll();
    });
    updateShapes.set(shape, query);
  }
  const args = [...columns.map((c) => patch[c]), id, leaseToken, options.addCost ?? 0];
  return (await query(db, ...args)).rows[0] as JobRow | undefined;
}

const updateShapes = new Map<string, PreparedQuery<unknown>>();

/** Like updateJob but without a version bump (progress-free bookkeeping such as heartbeats). */
export async function touchJob(db: Db, id: string, leaseToken: number, patch: Updateable<JobsTable>): Promise<boolean> {
  noteJobWrite(id);
  const r = await db.updateTable('jobs').set(patch).where('id', '=', id).where('status', '=', 'processing').where('lease_token', '=', leaseToken).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** The columns of a version row, for multi-row writes (db/json-rows.ts). */
export const VERSION_COLUMNS = ['job_id', 'version', 'snapshot_json', 'created_at_ms'] as const satisfies readonly (keyof Row<'job_versions'>)[];

const insertVersionQuery = prepared((db) => db.insertInto('job_versions').values({ job_id: arg(0), version: arg(1), snapshot_json: arg(2), created_at_ms: arg(3) }));

export async function insertVersion(db: Db, jobId: string, version: number, snapshot: unknown, now: number): Promise<void> {
  await insertVersionQuery(db, jobId, version, JSON.stringify(snapshot), now);
}

const addJobCostQuery = prepared((db) => db.updateTable('jobs').set((eb) => ({ cost_mc: eb('cost_mc', '+', arg(0)) })).where('id', '=', arg(1)));

/** Adds charged cost to a job (no version bump: part of the change being recorded). */
export async function addJobCost(db: Db, id: string, charged: number): Promise<void> {
  noteJobWrite(id);
  await addJobCostQuery(db, charged, id);
}
