/** SQL for jobs and their version history. Writes by workers are fenced by the lease token. */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, JobStatus, JobsTable, Row } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;
export type JobRow = Row<'jobs'>;

export const ACTIVE_STATUSES: JobStatus[] = ['pending', 'processing'];
export const TERMINAL_STATUSES: JobStatus[] = ['completed', 'failed', 'cancelled'];

export async function insertJob(db: Db, row: JobRow): Promise<void> {
  await db.insertInto('jobs').values(row).execute();
}

export async function findJob(db: Db, workspaceId: string, id: string): Promise<JobRow | undefined> {
  return db.selectFrom('jobs').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
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

export async function countByStatus(db: Db, workspaceId: string, status: JobStatus): Promise<number> {
  const r = await db
    .selectFrom('jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('status', '=', status)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Pending and processing jobs of a workspace, oldest first. */
export async function activeJobs(db: Db, workspaceId: string, limit: number): Promise<JobRow[]> {
  return db
    .selectFrom('jobs')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('status', 'in', ACTIVE_STATUSES)
    .orderBy('id', 'asc')
    .limit(limit)
    .execute();
}

/**
 * Conditional update: applies `patch` (and bumps the version) only while the job is in one of
 * `from` and, when `leaseToken` is given, still holds that lease. Returns the new row or undefined.
 */
export async function updateJob(
  db: Db,
  id: string,
  from: readonly JobStatus[],
  leaseToken: number | null,
  patch: Updateable<JobsTable>,
  options: { fence?: boolean } = {},
): Promise<JobRow | undefined> {
  let q = db
    .updateTable('jobs')
    .set((eb) => ({
      ...patch,
      version: eb('version', '+', 1),
      // Fencing: a new token means every earlier holder of the job can no longer write.
      ...(options.fence ? { lease_token: eb('lease_token', '+', 1) } : {}),
    }))
    .where('id', '=', id)
    .where('status', 'in', from);
  if (leaseToken !== null) q = q.where('lease_token', '=', leaseToken);
  return q.returningAll().executeTakeFirst();
}

/** Like updateJob but without a version bump (progress-free bookkeeping such as heartbeats). */
export async function touchJob(db: Db, id: string, leaseToken: number, patch: Updateable<JobsTable>): Promise<boolean> {
  const r = await db.updateTable('jobs').set(patch).where('id', '=', id).where('status', '=', 'processing').where('lease_token', '=', leaseToken).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function insertVersion(db: Db, jobId: string, version: number, snapshot: unknown, now: number): Promise<void> {
  await db.insertInto('job_versions').values({ job_id: jobId, version, snapshot_json: JSON.stringify(snapshot), created_at_ms: now }).execute();
}

/** Adds charged cost to a job (no version bump: part of the change being recorded). */
export async function updateJobCost(db: Db, id: string, charged: number): Promise<JobRow> {
  return db
    .updateTable('jobs')
    .set((eb) => ({ cost_mc: eb('cost_mc', '+', charged) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}
