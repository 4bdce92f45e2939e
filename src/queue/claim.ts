/**
 * Claiming pending jobs with a lease. Each claim increments the job's lease token (fencing) and
 * respects the workspace's running-jobs limit. On PostgreSQL each candidate workspace's row is
 * locked (in id order, so two claimers never wait for each other in a cycle) while its running
 * jobs are counted and its jobs are claimed by conditional updates, so several workers never run
 * the same job or exceed a limit together; on SQLite the write transaction already serialises
 * claims.
 */
import { sql, type Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import { arg, prepared } from '../modules/jobs/prepared.js';
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
      let free = resolveLimits(ws).runningJobs - processing;
      for (const id of byWorkspace.get(workspaceId)!) {
        if (free <= 0 || claimed.length >= max) break;
        noteJobWrite(id);
        const [row] = (await claimQuery(trx, owner, now + deps.config.jobLeaseMs, now, id)).rows;
        if (!row) continue;
        await recordChange(trx, row, now);
        free--;
        claimed.push(row);
      }
    }
    // Oldest first, as the queue would have run them.
    return claimed.sort((a, b) => Number(a.run_after_ms) - Number(b.run_after_ms) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  });
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
