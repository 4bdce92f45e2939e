/**
 * State changes of a job with everything that must happen in the same transaction: the version
 * row (history for streams), the outbox event of a terminal status, and the money (settle the
 * attempt's consumption and release the rest of the hold). A change is conditional on the job's
 * current status and, for workers, on their lease token, so a cancel racing a completion ends in
 * exactly one terminal state and a worker that lost its lease can change nothing.
 */
import { modeOfScope } from '../../lib/livemode.js';
import type { Transaction, Updateable } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database, JobStatus, JobsTable } from '../../db/schema.js';
import { insertEvent } from '../events/store.js';
import { publishJobChange } from './changes.js';
import { inTransaction } from '../../db/group-commit.js';
import { applySettlement, planSettle } from '../reservations/service.js';
import { recordGeneratedMedia, type MediaRecord } from '../media/service.js';
import { lockWorkspace } from '../../db/locking.js';
import * as store from './store.js';
import { batchableFinish, finishInBatch, FINISH_SINGLY } from './finish-batch.js';
import { toMetadata } from './snapshot.js';
import { finishFields, type Checkpoint, type FinishRequest } from './finish-rules.js';
import { isTerminal, TERMINAL_EVENT, type TerminalStatus } from './states.js';
import type { JobRow } from './store.js';

export type { Checkpoint, FinishRequest };

type Trx = Transaction<Database>;


export function readCheckpoint(row: JobRow): Checkpoint {
  const cp = row.checkpoint_json ? (JSON.parse(row.checkpoint_json) as Partial<Checkpoint>) : {};
  return {
    stepsDone: cp.stepsDone ?? 0,
    state: cp.state ?? {},
    files: cp.files ?? [],
    attemptCost: cp.attemptCost ?? 0,
    ...(cp.provider !== undefined ? { provider: cp.provider, model: cp.model ?? null } : {}),
  };
}

export class LeaseLostError extends Error {
  constructor(jobId: string) {
    super(`job ${jobId}: this attempt no longer owns the job`);
    this.name = 'LeaseLostError';
  }
}


/** Records the new version and, for a terminal status, the outbox event. */
export async function recordChange(trx: Trx, row: JobRow, now: number): Promise<void> {
  const metadata = toMetadata(row);
  await store.insertVersion(trx, row.id, Number(row.version), metadata, now);
  await publishJobChange(trx, row.id);
  if (isTerminal(row.status)) await insertEvent(trx, row.workspace_id, TERMINAL_EVENT[row.status], { job: metadata }, now);
}

/** Applies a conditional change and records it; undefined when the condition no longer holds. */
export async function changeJob(
  trx: Trx,
  now: number,
  jobId: string,
  from: readonly JobStatus[],
  leaseToken: number | null,
  patch: Updateable<JobsTable>,
  options: { fence?: boolean } = {},
): Promise<JobRow | undefined> {
  const row = await store.updateJob(trx, jobId, from, leaseToken, { ...patch, updated_at_ms: now }, options);
  if (row) await recordChange(trx, row, now);
  return row;
}


/**
 * Moves a job to a terminal status and settles its attempt in one transaction. Returns the new
 * row, or undefined when another actor finished or took the job first (nothing changed then).
 * A worker's finishes are batched per workspace on PostgreSQL (finish-batch.ts).
 */
export async function finishJob(deps: Deps, jobId: string, req: FinishRequest): Promise<JobRow | undefined> {
  const outcome = batchableFinish(deps, req) ? await finishInBatch(deps, jobId, req) : FINISH_SINGLY;
  const row = outcome === FINISH_SINGLY ? await finishJobSingly(deps, jobId, req) : outcome;
  if (row) countFinish(deps, row, req);
  return row;
}

/** jobs_finished_total: the provider of the attempt that ran, else the one the operation is routed to now. */
function countFinish(deps: Deps, row: JobRow, req: FinishRequest): void {
  const provider = req.checkpoint?.provider ?? deps.providers.route(row.operation_id, modeOfScope(row.workspace_id))?.providerName ?? 'none';
  deps.metrics.observeJobFinished(row.operation_id, provider, req.status, row.error_code);
}

/** finishJob in a transaction of its own (shared only through group commit): the reference path. */
async function finishJobSingly(deps: Deps, jobId: string, req: FinishRequest): Promise<JobRow | undefined> {
  return inTransaction(deps, async (trx) => {
    // The workspace before the job row, as every transaction that locks both (db/locking.ts).
    await lockWorkspace(trx, deps.caps, req.workspaceId);
    // Taken inside the transaction, after the lock wait: the finish's event is stamped with it.
    const now = deps.clock.now();
    const patch: Updateable<JobsTable> = finishFields(req, now);
    // The settlement's reads come first, so its charge is written by the job's own update (one
    // update of the row instead of two). Only a job funded by credits has a hold to settle.
    const plan = await planSettle(trx, req.workspaceId, jobId, req.consumedMillicents);
    // A finish without the lease (cancel, recovery) fences out any worker still running the job.
    const updated = await store.updateJob(trx, jobId, req.from, req.leaseToken, { ...patch, updated_at_ms: now }, { fence: req.leaseToken === null, addCost: plan?.charged ?? 0 });
    if (!updated) return undefined;
    if (plan && updated.funding !== 'credits') throw new Error(`job ${jobId}: a hold is open on a job funded by ${updated.funding}`);
    for (const record of req.media ?? []) await recordGeneratedMedia(trx, record, now);
    if (plan) {
      await applySettlement(deps, trx, now, plan, {
        workspaceId: updated.workspace_id,
        jobId: updated.id,
        keyId: updated.key_id,
        toolSlug: updated.tool_slug,
        operationId: updated.operation_id,
        executionOrigin: updated.execution_origin,
      });
    }
    const final = updated;
    await recordChange(trx, final, now);
    await req.alsoInFinish?.(trx, final);
    return final;
  }, req.workspaceId);
}
