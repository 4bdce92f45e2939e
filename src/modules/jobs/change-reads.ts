/**
 * Reads for followers of many jobs at once (the MCP endpoint's task status notifications): a
 * job's head (workspace, status, version), its stored version history with the time of each
 * version, the active jobs of workspaces, and the jobs that ended in a workspace since a time.
 * Each uses an existing index: the primary keys of jobs and job_versions, jobs_active_ws_idx
 * (partial, pending and processing only) and events_ws_idx.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, JobStatus } from '../../db/schema.js';
import { TERMINAL_EVENT } from './states.js';
import type { JobMetadata } from './snapshot.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface JobHead {
  id: string;
  workspaceId: string;
  status: JobStatus;
  version: number;
}

export async function jobHead(db: Db, jobId: string): Promise<JobHead | undefined> {
  const row = await db.selectFrom('jobs').select(['id', 'workspace_id', 'status', 'version']).where('id', '=', jobId).executeTakeFirst();
  return row && { id: row.id, workspaceId: row.workspace_id, status: row.status, version: Number(row.version) };
}

/** Workspaces per statement of activeJobHeads: well under SQLite's and PostgreSQL's bounds on parameters, however many workspaces a process's streams cover. */
export const WORKSPACES_PER_READ = 500;

/** Jobs waiting or running in these workspaces (bounded by the plans' waiting and running limits). */
export async function activeJobHeads(db: Db, workspaceIds: readonly string[]): Promise<JobHead[]> {
  const out: JobHead[] = [];
  for (let i = 0; i < workspaceIds.length; i += WORKSPACES_PER_READ) {
    const rows = await db
      .selectFrom('jobs')
      .select(['id', 'workspace_id', 'status', 'version'])
      .where('workspace_id', 'in', workspaceIds.slice(i, i + WORKSPACES_PER_READ))
      .where('status', 'in', ['pending', 'processing'])
      .execute();
    for (const row of rows) out.push({ id: row.id, workspaceId: row.workspace_id, status: row.status, version: Number(row.version) });
  }
  return out;
}

export interface TimedVersion {
  jobId: string;
  version: number;
  createdAtMs: number;
  snapshot: JobMetadata;
}

const HISTORY_PAGE = 200;

/** The stored versions of these jobs after version `after` (the same for all), oldest first per job. */
export async function versionsOf(db: Db, jobIds: readonly string[], after = 0): Promise<TimedVersion[]> {
  const out: TimedVersion[] = [];
  for (let i = 0; i < jobIds.length; i += HISTORY_PAGE) {
    const chunk = jobIds.slice(i, i + HISTORY_PAGE);
    const rows = await db
      .selectFrom('job_versions')
      .select(['job_id', 'version', 'created_at_ms', 'snapshot_json'])
      .where('job_id', 'in', chunk)
      .where('version', '>', after)
      .orderBy('job_id')
      .orderBy('version')
      .execute();
    for (const r of rows) out.push({ jobId: r.job_id, version: Number(r.version), createdAtMs: Number(r.created_at_ms), snapshot: JSON.parse(r.snapshot_json) as JobMetadata });
  }
  return out;
}

/**
 * Ids of the jobs of a workspace whose terminal event (job.completed, job.failed, job.cancelled;
 * written in the transaction of the change) was stamped at `sinceMs` or later, newest first, at
 * most `limit`. `idFloor` (a UUIDv7 whose time is at or before the earliest event wanted) only
 * narrows the index range: event ids are UUIDv7 drawn from the wall clock.
 */
export async function endedJobIds(db: Db, workspaceId: string, sinceMs: number, idFloor: string, limit: number): Promise<string[]> {
  const rows = await db
    .selectFrom('events')
    .select('data_json')
    .where('workspace_id', '=', workspaceId)
    .where('id', '>=', idFloor)
    .where('type', 'in', Object.values(TERMINAL_EVENT))
    .where('created_at_ms', '>=', sinceMs)
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
  const ids = new Set<string>();
  for (const row of rows) {
    const id = (JSON.parse(row.data_json) as { job?: { id?: unknown } }).job?.id;
    if (typeof id === 'string') ids.add(id);
  }
  return [...ids];
}

/** The smallest UUIDv7 of the millisecond `ms` (for range bounds on UUIDv7 ids). */
export function uuidV7Floor(ms: number): string {
  const time = Math.max(0, Math.floor(ms)).toString(16).padStart(12, '0');
  return `${time.slice(0, 8)}-${time.slice(8)}-7000-8000-000000000000`;
}
