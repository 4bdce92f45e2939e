/**
 * Recovery of jobs whose worker died or stalled: a processing job whose lease expired goes back
 * to pending with a new lease token (the old worker is fenced out) and resumes from its last
 * checkpoint; after MAX_RECOVERIES it fails with WORKER_LOST, charging only committed steps.
 * A synchronous run (its caller gone with the process) fails with WORKER_LOST at once.
 */
import { sql } from 'kysely';
import type { Deps } from '../deps.js';
import { changeJob, finishJob, readCheckpoint } from '../modules/jobs/lifecycle.js';
import { findOperation } from '../operations/registry.js';

export const MAX_RECOVERIES = 3;

export async function recoverExpiredLeases(deps: Deps, limit = 50): Promise<number> {
  const now = deps.clock.now();
  const expired = await deps.db
    .selectFrom('jobs')
    .selectAll()
    .where('status', '=', sql.lit('processing')) // literal: lets the partial jobs_processing_idx serve it
    .where('lease_expires_at_ms', '<', now)
    .orderBy('lease_expires_at_ms')
    .limit(limit)
    .execute();
  let recovered = 0;
  for (const job of expired) {
    // A synchronous run's caller waited for it in the process that held the lease: with that
    // process gone nobody would receive a result, so the job fails instead of running again.
    const synchronous = findOperation(job.operation_id)?.asynchronous === false;
    if (synchronous || Number(job.recoveries) >= MAX_RECOVERIES) {
      const checkpoint = readCheckpoint(job);
      const row = await finishJob(deps, job.id, {
        workspaceId: job.workspace_id,
        status: 'failed',
        from: ['processing'],
        leaseToken: Number(job.lease_token),
        consumedMillicents: checkpoint.attemptCost,
        errorCode: 'WORKER_LOST',
        // Recorded with its cost now charged (attemptCost back to 0), as every finish that
        // charges an attempt records it.
        checkpoint,
      });
      if (row) recovered++;
      continue;
    }
    const row = await deps.db.transaction().execute((trx) =>
      changeJob(
        trx,
        now,
        job.id,
        ['processing'],
        Number(job.lease_token),
        { status: 'pending', lease_owner: null, lease_expires_at_ms: null, run_after_ms: now, recoveries: Number(job.recoveries) + 1 },
        { fence: true },
      ),
    );
    if (row) {
      recovered++;
      deps.log.warn({ jobId: job.id, recoveries: row.recoveries }, 'job lease expired; job returned to the queue');
    }
  }
  return recovered;
}
