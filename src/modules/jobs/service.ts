/** Reading, cancelling and retrying jobs (GET /v1/jobs…, POST /v1/jobs/{id}/cancel|retry, GET /v1/queue). */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { priceOf, routeFor } from '../tools/service.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import { toIso } from '../../lib/clock.js';
import { findOperation, operationPoints } from '../../operations/registry.js';
import type { AuthContext } from '../auth/types.js';
import * as idempotency from '../idempotency/service.js';
import { hold, spendableCredits } from '../reservations/service.js';
import { decideAdmission } from '../runs/admission-rules.js';
import { forbiddenOperation } from '../auth/service.js';
import { chargeRefusal, lockAdmission } from '../runs/service.js';
import { chargePoints } from '../usage/service.js';
import { resolveLimits } from '../usage/plans.js';
import { changeJob, finishJob, readCheckpoint } from './lifecycle.js';
import { cancelRemoteWork } from './executor.js';
import { toMetadata, toSnapshot, type JobSnapshot } from './snapshot.js';
import * as store from './store.js';
import { inTransaction } from '../../db/group-commit.js';

async function requireJob(deps: Deps, workspaceId: string, jobId: string) {
  const row = await store.findJob(deps.db, workspaceId, jobId);
  if (!row) throw new AppError('NOT_FOUND', { message: 'No such job in this workspace.' });
  return row;
}

export async function getJob(deps: Deps, workspaceId: string, jobId: string): Promise<JobSnapshot> {
  const row = await store.findJobForRead(deps.db, deps.caps, workspaceId, jobId);
  if (!row) throw new AppError('NOT_FOUND', { message: 'No such job in this workspace.' });
  return toSnapshot(deps, row);
}

export async function listJobs(deps: Deps, workspaceId: string, page: PageRequest) {
  const result = await keysetPage(deps, 'jobs', workspaceId, page, (before, limit) => store.pageJobs(deps.db, workspaceId, before, limit));
  return { items: result.items.map(toMetadata), nextCursor: result.nextCursor };
}

export async function queueState(deps: Deps, auth: AuthContext) {
  const rows = await store.activeJobs(deps.db, auth.workspace.id, 100);
  const limits = resolveLimits(auth.workspace);
  let position = 0;
  const items = rows.map((r) => ({
    jobId: r.id,
    toolSlug: r.tool_slug,
    operationId: r.operation_id,
    status: r.status,
    position: r.status === 'processing' ? 0 : ++position,
    createdAt: toIso(Number(r.created_at_ms)),
  }));
  const { processing: running, pending: waiting } = await store.activeCounts(deps.db, auth.workspace.id);
  return { workspaceId: publicWorkspaceId(auth.workspace.id), livemode: isLiveScope(auth.workspace.id), running, waiting, runningLimit: limits.runningJobs, waitingLimit: limits.waitingJobs, items };
}

/**
 * Cancels a pending or processing job: it becomes cancelled at once, any worker still running
 * it is fenced out, steps it already checkpointed and remote work the provider reports as
 * consumed (a cancelled prediction's time) are charged, and the rest of the hold is released. Cancelling a cancelled job returns it again; a finished one is 409.
 */
export async function cancelJob(deps: Deps, workspaceId: string, jobId: string): Promise<JobSnapshot> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const row = await requireJob(deps, workspaceId, jobId);
    if (row.status === 'cancelled') return toSnapshot(deps, row);
    if (row.status === 'completed' || row.status === 'failed') throw new AppError('JOB_NOT_CANCELLABLE');
    let leaseToken: number | null = null;
    if (row.status === 'processing') {
      // The running attempt is fenced out first: told by the provider that its work was cancelled,
      // it could otherwise finish the job as failed before this cancel does (and the user's
      // cancel would be answered 409). Fenced, it can write nothing more to the job.
      if (!(await store.fenceJob(deps.db, jobId, Number(row.lease_token)))) continue;
      leaseToken = Number(row.lease_token) + 1;
    }
    // Remote work of a running attempt is stopped next and what the provider reports as consumed
    // is charged with the cancel, while the hold still covers it.
    const remote = row.status === 'processing' ? await cancelRemoteWork(deps, row) : 0;
    const maximum = Math.max(0, Number(row.max_cost_mc) - Number(row.cost_mc));
    const done = await finishJob(deps, jobId, {
      workspaceId,
      status: 'cancelled',
      from: [row.status],
      // Processing: only while no one else took the job since the fence (a recovery, a new claim).
      leaseToken,
      consumedMillicents: Math.min(maximum, readCheckpoint(row).attemptCost + remote),
    });
    if (done) return toSnapshot(deps, done);
    // The job moved on meanwhile (claimed, finished): look again.
  }
  throw new AppError('CONFLICT', { message: 'The job kept changing; try again.' });
}

/**
 * Puts a failed job back to pending under a new Idempotency-Key: same checks and reservation as
 * a run, for the steps still to do (checkpointed steps are kept and not charged again).
 */
export async function retryJob(deps: Deps, auth: AuthContext, jobId: string, idempotencyKeyHeader: string | string[] | undefined) {
  try {
    return await retryJobOnce(deps, auth, jobId, idempotencyKeyHeader);
  } catch (err) {
    throw await chargeRefusal(deps, auth, err);
  }
}

async function retryJobOnce(deps: Deps, auth: AuthContext, jobId: string, idempotencyKeyHeader: string | string[] | undefined) {
  const idemKey = idempotency.validateIdempotencyKey(idempotencyKeyHeader);
  const row = await requireJob(deps, auth.workspace.id, jobId);
  const op = findOperation(row.operation_id);
  if (!op || !auth.key.operations.includes(op.id)) throw await forbiddenOperation(deps, auth.key, row.operation_id);
  const scope = { keyId: auth.key.id, workspaceId: auth.workspace.id, idemKey };
  const claim = await idempotency.claim(deps, scope, idempotency.requestHash('POST /v1/jobs/retry', { jobId }));
  if (claim.kind === 'replay') {
    await chargePoints(deps, auth.workspace, 1, { keyId: auth.key.id, operation: 'replay' });
    return { statusCode: claim.statusCode, body: claim.body as Record<string, unknown>, replayed: true };
  }
  try {
    if (row.funding === 'provider_key') throw new AppError('PERSONAL_PROVIDER_KEY');
    if (row.status !== 'failed' || !op.asynchronous) throw new AppError('JOB_NOT_RETRYABLE');
    // 400 OPERATION_UNAVAILABLE when the deployment no longer offers the operation.
    routeFor(deps, op, auth.workspace.id);
    await chargePoints(deps, auth.workspace, operationPoints(op.id), { keyId: auth.key.id, operation: op.id });
    const now = deps.clock.now();
    const input = JSON.parse(row.input_json) as Record<string, unknown>;
    const cp = readCheckpoint(row);
    const stepsLeft = Math.max(1, Number(row.steps_total) - cp.stepsDone);
    const maximum = Math.ceil((priceOf(deps, op, input, auth.workspace.id).maximumMillicents * stepsLeft) / Number(row.steps_total));
    const body = { kind: 'job', jobId, status: 'pending', maximumCostMillicents: maximum };
    await inTransaction(deps, async (trx) => {
      await lockAdmission(deps, trx, auth.workspace.id, auth.key);
      // A retried job is funded by credits (a provider_key job is refused above).
      const spendable = await spendableCredits(trx, auth.workspace.id, now);
      const situation = { waitingJobs: await store.countPending(trx, auth.workspace.id), ownProviderKey: false, spendableMillicents: spendable };
      const decision = decideAdmission(auth, { queued: true, maximumMillicents: maximum }, situation, now);
      await hold(trx, now, { workspace: auth.workspace, key: auth.key, jobId, maximumMillicents: decision.holdMillicents }, spendable);
      const changed = await changeJob(trx, now, jobId, ['failed'], null, {
        status: 'pending',
        attempt: Number(row.attempt) + 1,
        error_code: null,
        // The job's bound: what its earlier attempts cost plus this attempt's reservation, so
        // its cumulative costMillicents never exceeds maximumCostMillicents.
        max_cost_mc: Number(row.cost_mc) + maximum,
        completed_at_ms: null,
        run_after_ms: now,
        recoveries: 0,
        progress: (cp.stepsDone / Number(row.steps_total)) * 100,
        // The failed attempt was settled when it failed: the new attempt owes nothing for the
        // steps kept, or a later finish or cancel would charge them a second time.
        checkpoint_json: JSON.stringify({ ...cp, attemptCost: 0 }),
        key_id: auth.key.id,
      });
      if (!changed) throw new AppError('JOB_NOT_RETRYABLE');
      await idempotency.complete(trx, scope, 202, body);
    });
    deps.jobsWakeup();
    return { statusCode: 202, body, replayed: false };
  } catch (err) {
    await idempotency.release(deps, scope);
    throw err;
  }
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The workspace of a job, for a caller that holds only the job's id (an MCP task id). It decides
 * nothing: the caller must then read the job through a path that authorizes the workspace (and
 * must answer "not found" alike for a missing job and a refused workspace).
 */
export async function jobWorkspaceId(deps: Deps, jobId: string): Promise<string | undefined> {
  if (!UUID_RE.test(jobId)) return undefined;
  const row = await deps.db.selectFrom('jobs').select('workspace_id').where('id', '=', jobId.toLowerCase()).executeTakeFirst();
  return row?.workspace_id;
}
