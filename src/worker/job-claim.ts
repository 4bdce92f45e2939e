/**
 * Claiming pending jobs with a lease. Each claim increments the job's lease token (fencing) and
 * respects the workspace's running-jobs limit. On PostgreSQL each candidate workspace's row is
 * locked (in id order, so two claimers never wait for each other in a cycle) while its running
 * jobs are counted and its jobs are claimed by a conditional update, so several workers never run
 * the same job or exceed a limit together; the statements go in pipelines, a few round trips per
 * claim whatever its size (claimBatched). On SQLite the write transaction already serialises
 * claims.
 */
import { sql, type CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import { sqlCapabilitiesOf } from '../db/connect.js';
import { jsonIntegerField } from '../db/sql-fragments.js';
import { rowsJson } from '../db/json-rows.js';
import { jobChangesNotifiedInSql, jobChangesToNotify, JOB_CHANGES_CHANNEL } from '../modules/jobs/changes.js';
import { guardCheck, isGuardFailure } from '../db/guard.js';
import { toMetadata } from '../modules/jobs/snapshot.js';
import type { Database } from '../db/schema.js';
import { arg, prepared } from '../db/prepared.js';
import { batchTransaction } from '../db/batch-transaction.js';
import type { Deps } from '../deps.js';
import type { LimitOverrides, Plan, Workspace } from '../modules/accounts/types.js';
import { findWorkspaceLocked, lockWorkspaceQuery } from '../modules/accounts/store.js';
import { recordChange } from '../modules/jobs/lifecycle.js';
import { activeCounts, noteJobWrite, VERSION_COLUMNS, type JobRow } from '../modules/jobs/store.js';
import { PLAN_DEFAULTS, resolveLimits } from '../modules/usage/plans.js';
import { inTransaction } from '../db/group-commit.js';
import { shareClaims } from './claim-shares.js';

/**
 * SQL: the workspaces that run as many jobs as their running-jobs limit allows (the override,
 * else the plan's default, as resolveLimits). Their waiting jobs are no candidates: a claim reads
 * a bounded head of the queue, and one workspace's backlog at that head would otherwise keep
 * every other workspace's jobs from being claimed until it drained. On SQLite the running jobs
 * come from the trigger-kept totals; on PostgreSQL they are counted from the rows (the partial
 * index of processing jobs). The claim still counts each workspace's running jobs under its
 * lock: this only keeps jobs that could not be claimed out of the way.
 */
function saturatedWorkspacesSql(db: Kysely<Database>): RawBuilder<unknown> {
  const planDefault = sql.join(
    Object.entries(PLAN_DEFAULTS).map(([plan, limits]) => sql`when ${sql.lit(plan)} then ${sql.lit(limits.runningJobs)}`),
    sql` `,
  );
  const override = jsonIntegerField(db, 'w.limits_json', 'runningJobs');
  const limit = sql`coalesce(${override}, case w.plan ${planDefault} end)`;
  return sqlCapabilitiesOf(db).totalsTable
    ? sql`select t.workspace_id from workspace_totals t join workspaces w on w.id = t.workspace_id
        where t.processing_jobs > 0 and t.processing_jobs >= ${limit}`
    : sql`select r.workspace_id from (select workspace_id, count(*) as n from jobs where status = 'processing' group by workspace_id) r
        join workspaces w on w.id = r.workspace_id where r.n >= ${limit}`;
}

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
      .where(sql<boolean>`workspace_id not in (${saturatedWorkspacesSql(db)})`)
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
  if (deps.caps.batchedWrites) {
    try {
      return await claimBatched(deps, owner, max);
    } catch (err) {
      if (!isGuardFailure(err)) throw err;
    }
  }
  return claimOneByOne(deps, owner, max);
}

/** The reference claim: each candidate workspace's lock and running jobs, then each job by itself, in queue order. */
async function claimOneByOne(deps: Deps, owner: string, max: number): Promise<JobRow[]> {
  const now = deps.clock.now();
  return inTransaction(deps, async (trx) => {
    // Candidates are read without row locks: the claim takes each workspace's lock before it
    // writes that workspace's jobs, and every writer of a pending job (admission, cancel, retry,
    // another claim) holds that lock first, so no pending row can be locked by anyone else then
    // and the conditional update decides who won (the order also keeps lock cycles impossible).
    const { rows: found } = await candidates(trx, now, max * 4);
    // Each candidate workspace's free slots, counted under its lock (taken in id order).
    const free = new Map<string, number>();
    for (const workspaceId of [...new Set(found.map((job) => job.workspace_id))].sort()) {
      const ws = (await findWorkspaceLocked(trx, deps.caps, workspaceId)) as Workspace;
      const { processing } = await activeCounts(trx, workspaceId);
      free.set(workspaceId, resolveLimits(ws).runningJobs - processing);
    }
    // Then the slots are shared out in queue order (claim-shares.ts), as claimBatched does.
    const claimed: JobRow[] = [];
    for (const job of shareClaims(found, free, max)) {
      noteJobWrite(job.id);
      // No row: the job left the queue (a cancel) between the read of candidates and the lock.
      const [row] = (await claimQuery(trx, owner, now + deps.config.jobLeaseMs, now, job.id)).rows;
      if (!row) continue;
      await recordChange(trx, row, now);
      claimed.push(row);
    }
    return claimed.sort(queueOrder);
  });
}

/**
 * PostgreSQL: the same claim in two round trips whatever the number of jobs. First the
 * candidates (whole rows, with their workspace's limits and running jobs), shared out in queue
 * order up to `max` and each workspace's free slots as read. Then, per workspace, its lock and
 * one statement that claims its share (no more than its free slots counted again under the
 * lock) and records the claimed jobs' versions, and the commit. The running-jobs limit comes
 * from the workspace row read with the candidates (a settings change racing the claim applies
 * from the next one). A version is recorded for the row as read: if a claimed row changed in
 * between, the statement fails (db/guard.ts) and the caller claims the one-by-one way.
 */
async function claimBatched(deps: Deps, owner: string, max: number): Promise<JobRow[]> {
  const now = deps.clock.now();
  const inSql = jobChangesNotifiedInSql(deps.db);
  const claimed = await batchTransaction(deps, async (tx) => {
    const [found] = await tx.run([candidatesWithLimitsQuery(deps.db, now, max * 4)]);
    const rows = found!.rows as { job: JobRow; plan: Plan; limits_json: string; processing: number | string }[];
    const runningJobs = new Map<string, number>();
    const free = new Map<string, number>();
    for (const c of rows) {
      if (runningJobs.has(c.job.workspace_id)) continue;
      const limit = resolveLimits({ plan: c.plan, limitOverrides: JSON.parse(c.limits_json) as LimitOverrides }).runningJobs;
      runningJobs.set(c.job.workspace_id, limit);
      free.set(c.job.workspace_id, limit - Number(c.processing));
    }
    const shares = new Map<string, JobRow[]>();
    for (const job of shareClaims(rows.map((c) => c.job), free, max)) {
      const share = shares.get(job.workspace_id);
      if (share) share.push(job);
      else shares.set(job.workspace_id, [job]);
    }
    const statements: CompiledQuery[] = [];
    for (const workspaceId of [...shares.keys()].sort()) {
      const share = shares.get(workspaceId)!;
      for (const row of share) noteJobWrite(row.id);
      statements.push(lockWorkspaceQuery(deps.db, workspaceId), claimShareQuery(deps, owner, now, workspaceId, share, runningJobs.get(workspaceId)!, inSql));
    }
    const results = await tx.run(statements, { commit: true });
    return results.filter((_, i) => i % 2 === 1).flatMap((r) => (r.rows[0] as { jobs: JobRow[] }).jobs);
  });
  if (!inSql && claimed.length > 0) jobChangesToNotify(deps.db, claimed.map((r) => r.id));
  return claimed.sort(queueOrder);
}

function candidatesWithLimitsQuery(db: Kysely<Database>, now: number, limit: number): CompiledQuery {
  return sql`
    with c as (
      select * from jobs where status = 'pending' and run_after_ms <= ${now}
        and workspace_id not in (${saturatedWorkspacesSql(db)})
      order by run_after_ms, id limit ${limit}
    ), p as (
      select w.id, w.plan, w.limits_json,
        (select count(*) from jobs r where r.workspace_id = w.id and r.status = 'processing') as processing
      from workspaces w where w.id in (select workspace_id from c)
    )
    select to_json(c) as job, p.plan, p.limits_json, p.processing
    from c join p on p.id = c.workspace_id
    order by c.run_after_ms, c.id`.compile(db);
}


/**
 * Claims `rows` (one workspace's share, still pending, oldest first) up to its free running
 * slots counted when the statement runs, and records each claimed job's version as computed
 * from the row read (failing unless every claimed row is still that row).
 */
function claimShareQuery(deps: Deps, owner: string, now: number, workspaceId: string, rows: JobRow[], runningJobs: number, notifyInSql: boolean): CompiledQuery {
  const leaseUntil = now + deps.config.jobLeaseMs;
  const versions = rows.map((r) => {
    const claimedRow: JobRow = { ...r, status: 'processing', started_at_ms: r.started_at_ms ?? now, updated_at_ms: now, version: Number(r.version) + 1 };
    return { job_id: r.id, version: claimedRow.version, snapshot_json: JSON.stringify(toMetadata(claimedRow)), created_at_ms: now };
  });
  const checked = guardCheck('claimed rows changed', sql`(select count(*) from v) = (select count(*) from c)`, sql`(select count(*) from c)`);
  return sql`
    with c as (
      update jobs set
        status = 'processing',
        lease_token = lease_token + 1,
        lease_owner = ${owner},
        lease_expires_at_ms = ${leaseUntil},
        started_at_ms = coalesce(started_at_ms, ${now}),
        updated_at_ms = ${now},
        version = version + 1
      where id in (
        select id from jobs
        where id = any(${rows.map((r) => r.id)}::text[]) and status = 'pending'
        order by run_after_ms, id
        limit (select least(${rows.length}::integer, greatest(0, ${runningJobs}::bigint - count(*)))
          from jobs where workspace_id = ${workspaceId} and status = 'processing')
      ) and status = 'pending'
      returning *
    ), v as (
      insert into job_versions (${sql.raw(VERSION_COLUMNS.join(', '))})
      select r.job_id, r.version, r.snapshot_json, r.created_at_ms
      from json_populate_recordset(null::job_versions, ${rowsJson(versions, VERSION_COLUMNS)}::json) r
      join c on c.id = r.job_id and c.version = r.version
      returning job_id
    )
    select ${checked} as checked,
      (select coalesce(json_agg(c), '[]'::json) from c) as jobs,
      (select count(pg_notify(${JOB_CHANGES_CHANNEL}, c.id)) from c where ${notifyInSql}) as notified`.compile(deps.db);
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
