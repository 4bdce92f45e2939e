/**
 * Claiming pending jobs with a lease. Each claim increments the job's lease token (fencing) and
 * respects the workspace's running-jobs limit. On PostgreSQL each candidate workspace's row is
 * locked (in id order, so two claimers never wait for each other in a cycle) while its running
 * jobs are counted and its jobs are claimed by conditional updates, so several workers never run
 * the same job or exceed a limit together; on SQLite the write transaction already serialises
 * claims.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import { insertJsonRows, rowsJson } from '../db/json-rows.js';
import { jobChangesToNotify, JOB_CHANGES_CHANNEL } from '../modules/jobs/changes.js';
import { toMetadata } from '../modules/jobs/snapshot.js';
import type { Database } from '../db/schema.js';
import { arg, executeNamed, prepared } from '../modules/jobs/prepared.js';
import type { Deps } from '../deps.js';
import type { Workspace } from '../modules/accounts/types.js';
import { lockWorkspace } from '../modules/accounts/store.js';
import { recordChange } from '../modules/jobs/lifecycle.js';
import { activeCounts, noteJobWrite, type JobRow } from '../modules/jobs/store.js';
import { resolveLimits } from '../modules/usage/plans.js';
import { inTransaction } from './group-commit.js';

function candidatesQuery(db: Kysely<Database>) {
  return (
    db
      .selectFrom('jobs')
      // Just enough to choose (the claim's update returns the whole row).
      .select(['id', 'workspace_id'])
      // Statuses as literals: a partial index (where status = 'pending') is only usable when the
      // query names the value, not a bound parameter (SQLite cannot prove `? = 'pending'`).
      .where('status', '=', sql.lit('pending'))
      .where('run_after_ms', '<=', arg(0))
      // The order of jobs_pending_idx (run_after_ms, id): the scan stops after the first rows
      // instead of sorting every runnable job on each claim (a deep queue made that O(n log n)).
      .orderBy('run_after_ms')
      .orderBy('id')
      .limit(arg(1))
  );
}

const candidates = prepared(candidatesQuery);

const claimQuery = prepared((db) =>
  db
    .updateTable('jobs')
    .set((eb) => ({
      status: 'processing',
      lease_token: eb('lease_token', '+', 1),
      lease_owner: arg(0),
      lease_expires_at_ms: arg(1),
      started_at_ms: eb.fn.coalesce('started_at_ms', eb.val(arg(2))),
      updated_at_ms: arg(2),
      version: eb('version', '+', 1),
    }))
    .where('id', '=', arg(3))
    .where('status', '=', sql.lit('pending'))
    .returningAll(),
);

export async function claimJobs(deps: Deps, owner: string, max: number): Promise<JobRow[]> {
  if (max <= 0) return [];
  const now = deps.clock.now();
  return inTransaction(deps, async (trx) => {
    // Candidates are read without row locks: the claim takes each workspace's lock before it
    // writes that workspace's jobs, and every writer of a pending job (admission, cancel, retry,
    // another claim) holds that lock first, so no pending row can be locked by anyone else then
    // and the conditional update decides who won (the order also keeps lock cycles impossible).
    const { rows: found } = await candidates(trx, now, max * 4);
    const byWorkspace = new Map<string, string[]>();
    for (const job of found) byWorkspace.set(job.workspace_id, [...(byWorkspace.get(job.workspace_id) ?? []), job.id]);
    const claimed: JobRow[] = [];
    for (const workspaceId of [...byWorkspace.keys()].sort()) {
      if (claimed.length >= max) break;
      const ws = (await lockWorkspace(trx, deps.caps, workspaceId)) as Workspace;
      const { processing } = await activeCounts(trx, workspaceId);
      const free = resolveLimits(ws).runningJobs - processing;
      let room = Math.min(free, max - claimed.length);
      if (room <= 0) continue;
      const ids = byWorkspace.get(workspaceId)!;
      for (const id of ids) noteJobWrite(id);
      if (deps.caps.dialect === 'postgres') {
        // Two statements for the workspace's jobs, however many: the claim and the versions.
        const rows = await claimMany(trx, deps, owner, now, ids, room);
        if (rows.length > 0) await recordClaims(trx, deps, rows, now);
        claimed.push(...rows);
        continue;
      }
      for (const id of ids) {
        if (room <= 0) break;
        const [row] = (await claimQuery(trx, owner, now + deps.config.jobLeaseMs, now, id)).rows;
        if (!row) continue;
        await recordChange(trx, row, now);
        claimed.push(row);
        room--;
      }
    }
    // Oldest first, as the queue would have run them.
    return claimed.sort((a, b) => Number(a.run_after_ms) - Number(b.run_after_ms) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
}

/**
 * PostgreSQL: claims, in one statement, up to `limit` of the jobs among `ids` that are still
 * pending (oldest first; others may have been claimed or cancelled since they were read).
 */
async function claimMany(trx: Transaction<Database>, deps: Deps, owner: string, now: number, ids: string[], limit: number): Promise<JobRow[]> {
  const query = sql<JobRow>`
    update jobs set
      status = 'processing',
      lease_token = lease_token + 1,
      lease_owner = ${owner},
      lease_expires_at_ms = ${now + deps.config.jobLeaseMs},
      started_at_ms = coalesce(started_at_ms, ${now}),
      updated_at_ms = ${now},
      version = version + 1
    where id in (
      select id from jobs
      where id in (select value from json_array_elements_text(${JSON.stringify(ids)}::json)) and status = 'pending'
      order by run_after_ms, id
      limit ${limit}
    ) and status = 'pending'
    returning *`;
  return (await executeNamed(trx, deps.caps.namedStatements, query.compile(trx))).rows;
}

const VERSION_COLUMNS = ['job_id', 'version', 'snapshot_json', 'created_at_ms'];

/** PostgreSQL: the claimed jobs' versions and job-change notifications, in one statement (lifecycle.recordChange for many). */
async function recordClaims(trx: Transaction<Database>, deps: Deps, rows: JobRow[], now: number): Promise<void> {
  const versions = rows.map((r) => ({ job_id: r.id, version: Number(r.version), snapshot_json: JSON.stringify(toMetadata(r)), created_at_ms: now }));
  const notify = jobChangesToNotify(trx, rows.map((r) => r.id));
  const query = sql`
    with v as (${insertJsonRows('job_versions', VERSION_COLUMNS, rowsJson(versions, VERSION_COLUMNS))})
    select count(pg_notify(${JOB_CHANGES_CHANNEL}, n)) as notified from json_array_elements_text(${JSON.stringify(notify)}::json) as n`;
  await executeNamed(trx, deps.caps.namedStatements, query.compile(trx));
}

/** Extends the lease of a job this worker still holds; false when it lost it (cancel, recovery). */
export async function heartbeat(deps: Deps, job: JobRow): Promise<boolean> {
  noteJobWrite(job.id);
  const r = await deps.db
    .updateTable('jobs')
    .set({ lease_expires_at_ms: deps.clock.now() + deps.config.jobLeaseMs })
    .where('id', '=', job.id)
    .where('status', '=', 'processing')
    .where('lease_token', '=', job.lease_token)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}
