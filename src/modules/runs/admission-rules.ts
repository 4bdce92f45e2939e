/**
 * What admission decides about one run, shared by the one-by-one path (service.ts) and batched
 * admission (admission-batch.ts): the waiting-jobs capacity and the new job's row.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { OperationContract } from '../../operations/contract.js';
import type { AuthContext } from '../auth/types.js';
import type { JobRow } from '../jobs/store.js';
import { resolveLimits } from '../usage/plans.js';

/** 429 QUEUE_FULL when `waiting` jobs already fill the workspace's waiting-jobs limit. */
export function refuseWhenQueueFull(auth: AuthContext, waiting: number, now: number): void {
  const limit = resolveLimits(auth.workspace).waitingJobs;
  if (waiting >= limit) {
    throw new AppError('QUEUE_FULL', {
      retryAfter: 5,
      details: { limit: 'WAITING_JOBS', waitingJobs: waiting, maximum: limit, resetsAt: new Date(now + 5000).toISOString() },
    });
  }
}

/** The row of a job being admitted: pending when queued, processing under a 'sync' lease otherwise. */
export function newJobRow(
  deps: Deps,
  auth: AuthContext,
  op: OperationContract,
  input: Record<string, unknown>,
  origin: string,
  j: { id: string; now: number; funding: 'credits' | 'provider_key'; maximumMillicents: number },
): JobRow {
  const { id, now } = j;
  return {
    id,
    workspace_id: auth.workspace.id,
    key_id: auth.key.id,
    operation_id: op.id,
    tool_slug: op.toolSlug,
    status: op.asynchronous ? 'pending' : 'processing',
    execution_origin: origin,
    funding: j.funding,
    input_json: JSON.stringify(input),
    output_json: null,
    output_sha256: null,
    progress: 0,
    cost_mc: 0,
    max_cost_mc: j.maximumMillicents,
    error_code: null,
    version: 1,
    attempt: 1,
    steps_total: deps.providers.route(op.id)!.steps(input),
    steps_done: 0,
    checkpoint_json: null,
    created_at_ms: now,
    started_at_ms: op.asynchronous ? null : now,
    completed_at_ms: null,
    updated_at_ms: now,
    run_after_ms: now,
    lease_token: op.asynchronous ? 0 : 1,
    lease_owner: op.asynchronous ? null : 'sync',
    lease_expires_at_ms: op.asynchronous ? null : now + deps.config.jobLeaseMs,
    recoveries: 0,
  };
}
