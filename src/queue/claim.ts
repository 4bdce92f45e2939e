/**
 * Claiming pending jobs with a lease. Each claim increments the job's lease token (fencing) and
 * respects the workspace's running-jobs limit. On PostgreSQL each candidate workspace's row is
 * locked (in id order, so two claimers never wait for each other in a cycle) while its running
 * jobs are counted and its jobs are claimed by a conditional update, so several workers never run
 * the same job or exceed a limit together; the statements go in pipelines, a few round trips per
 * claim whatever its size (claimBatched). On SQLite the write transaction already serialises
 * claims.
 */
import { sql, type CompiledQuery, type Kysely } from 'kysely';
import { insertJsonRows, rowsJson } from '../db/json-rows.js';
import { jobChangesToNotify, JOB_CHANGES_CHANNEL } from '../modules/jobs/changes.js';
import { toMetadata } from '../modules/jobs/snapshot.js';
import type { Database } from '../db/schema.js';
import { arg, prepared } from '../modules/jobs/prepared.js';
import { batchTransaction } from './batch-transaction.js';
import type { Deps } from '../deps.js';
import type { LimitOverrides, Plan, Workspace } from '../modules/accounts/types.js';
import { lockWorkspace, lockWorkspaceQuery } from '../modules/accounts/store.js';
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

/** Oldest first, as the queue would have run them. */
function queueOrder(a: JobRow, b: JobRow): number {
  return Number(a.run_after_ms) - Number(b.run_after_ms) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

export async function claimJobs(deps: Deps, owner: string, max: number): Promise<JobRow[]> {
  if (max <= 0) return [];
  if (deps.caps.dialect === 'postgres') return claimBatched(deps, owner, max);
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
      for (const id of ids) {
        if (room <= 0) break;
        const [row] = (await claimQuery(trx, owner, now + deps.config.jobLeaseMs, now, id)).rows;
        if (!row) continue;
        await recordChange(trx, row, now);
        claimed.push(row);
        room--;
      }
    }
    return claimed.sort(queueOrder);
  });
}

/**
 * PostgreSQL: the same claim in few round trips, whatever the number of jobs: candidates (with
 * their workspace's limits), then per workspace its lock and one update claiming up to its free
 * running slots, then every claimed job's version with the commit. The running-jobs limit comes
 * from the workspace row read with the candidates (a settings change racing the claim applies
 * from the next one); the count of running jobs is taken under the lock, in the update itself.
 */
async function claimBatched(deps: Deps, owner: string, max: number): Promise<JobRow[]> {
  const now = deps.clock.now();
  return batchTransaction(deps, async (tx) => {
    const [found] = await tx.run([candidatesWithLimitsQuery(deps.db, now, max * 4)]);
    const byWorkspace = new Map<string, { ids: string[]; runningJobs: number }>();
    for (const c of found!.rows as { id: string; workspace_id: string; plan: Plan; limits_json: string }[]) {
      let w = byWorkspace.get(c.workspace_id);
      if (!w) {
        const limits = resolveLimits({ plan: c.plan, limitOverrides: JSON.parse(c.limits_json) as LimitOverrides });
        byWorkspace.set(c.workspace_id, (w = { ids: [], runningJobs: limits.runningJobs }));
      }
      w.ids.push(c.id);
    }
    const claimed: JobRow[] = [];
    for (const workspaceId of [...byWorkspace.keys()].sort()) {
      const room = max - claimed.length;
      if (room <= 0) break;
      const w = byWorkspace.get(workspaceId)!;
      for (const id of w.ids) noteJobWrite(id);
      const [, updated] = await tx.run([lockWorkspaceQuery(deps.db, workspaceId), claimQueryFor(deps, owner, now, workspaceId, w.ids, Math.min(room, w.runningJobs), w.runningJobs)]);
      claimed.push(...(updated!.rows as JobRow[]));
    }
    await tx.run(claimed.length > 0 ? [recordClaimsQuery(deps, claimed, now)] : [], { commit: true });
    return claimed.sort(queueOrder);
  });
}

function candidatesWithLimitsQuery(db: Kysely<Database>, now: number, limit: number): CompiledQuery {
  return sql`
    select j.id, j.workspace_id, w.plan, w.limits_json from jobs j join workspaces w on w.id = j.workspace_id
    where j.status = 'pending' and j.run_after_ms <= ${now}
    order by j.run_after_ms, j.id
    limit ${limit}`.compile(db);
}

/**
 * Claims up to `room` of `ids` still pending, oldest first, and no more than the workspace's
 * free running slots (`runningJobs` minus those processing, counted when the update runs).
 */
function claimQueryFor(deps: Deps, owner: string, now: number, workspaceId: string, ids: string[], room: number, runningJobs: number): CompiledQuery {
  return sql<JobRow>`
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
      limit (select least(${room}::integer, greatest(0, ${runningJobs}::integer - count(*)))
        from jobs where workspace_id = ${workspaceId} and status = 'processing')
    ) and status = 'pending'
    returning *`.compile(deps.db);
}

const VERSION_COLUMNS = ['job_id', 'version', 'snapshot_json', 'created_at_ms'];

/** The claimed jobs' versions and job-change notifications, in one statement (lifecycle.recordChange for many). */
function recordClaimsQuery(deps: Deps, rows: JobRow[], now: number): CompiledQuery {
  const versions = rows.map((r) => ({ job_id: r.id, version: Number(r.version), snapshot_json: JSON.stringify(toMetadata(r)), created_at_ms: now }));
  const notify = jobChangesToNotify(deps.db, rows.map((r) => r.id));
  return sql`
    with v as (${insertJsonRows('job_versions', VERSION_COLUMNS, rowsJson(versions, VERSION_COLUMNS))})
    select count(pg_notify(${JOB_CHANGES_CHANNEL}, n)) as notified from json_array_elements_text(${JSON.stringify(notify)}::json) as n`.compile(deps.db);
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
