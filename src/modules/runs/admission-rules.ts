/**
 * The money rules of admitting one job, as pure functions: one definition for every path that
 * admits (a run one by one in service.ts, a workspace's queued runs together in
 * admission-batch.ts, a retry in jobs/service.ts). The paths differ only in how they read the
 * figures and write what was decided.
 *
 * In the order the answers come: 429 QUEUE_FULL when the waiting jobs fill the workspace's limit
 * (queued operations only); the funding (a workspace with its own key for the operation's
 * provider pays the provider, not credits); 402 INSUFFICIENT_CREDITS unless spendable credits
 * (live minus held) cover the job's bounded maximum cost. Budget ceilings (429 BUDGET_EXCEEDED)
 * are weighed after these, by the hold itself (reservations/service.ts), since they sum spending
 * per period; the batched path never admits a caller that has any (admission-batch.ts batchable).
 */
import { modeOfScope } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import type { OperationContract } from '../../operations/contract.js';
import type { AuthContext } from '../auth/types.js';
import type { JobRow } from '../jobs/store.js';
import { resolveLimits } from '../usage/plans.js';

/** What admission weighs about the workspace, however it was read. */
export interface AdmissionSituation {
  /** Jobs of the workspace waiting to run (pending). */
  waitingJobs: number;
  /** The workspace has its own key for the operation's provider. */
  ownProviderKey: boolean;
  /** Live credits minus open holds (after any due expiry was settled). */
  spendableMillicents: number;
}

export interface AdmissionDecision {
  funding: 'credits' | 'provider_key';
  /** What is held against credits: the maximum cost when credits fund the job, else 0. */
  holdMillicents: number;
}

/**
 * Admits one job or throws its refusal (an AppError). `queued`: the job waits for a worker (a
 * queued run or a retry), so it counts against the waiting-jobs limit; a synchronous run does not.
 */
export function decideAdmission(
  auth: AuthContext,
  job: { queued: boolean; maximumMillicents: number },
  situation: AdmissionSituation,
  now: number,
): AdmissionDecision {
  if (job.queued) refuseWhenQueueFull(auth, situation.waitingJobs, now);
  if (situation.ownProviderKey) return { funding: 'provider_key', holdMillicents: 0 };
  if (situation.spendableMillicents < job.maximumMillicents) throw insufficientCredits(situation.spendableMillicents, job.maximumMillicents);
  return { funding: 'credits', holdMillicents: job.maximumMillicents };
}

/** 429 QUEUE_FULL when `waiting` jobs already fill the workspace's waiting-jobs limit. */
function refuseWhenQueueFull(auth: AuthContext, waiting: number, now: number): void {
  const limit = resolveLimits(auth.workspace).waitingJobs;
  if (waiting >= limit) {
    throw new AppError('QUEUE_FULL', {
      retryAfter: 5,
      details: { limit: 'WAITING_JOBS', waitingJobs: waiting, maximum: limit, resetsAt: new Date(now + 5000).toISOString() },
    });
  }
}

/** 402: spendable credits do not cover a maximum cost. */
function insufficientCredits(spendableMillicents: number, requiredMillicents: number): AppError {
  return new AppError('INSUFFICIENT_CREDITS', { details: { spendableMillicents: Math.max(0, spendableMillicents), requiredMillicents } });
}

/** The row of a job being admitted: pending when queued, processing under a 'sync' lease otherwise. */
export function newJobRow(
  deps: Deps,
  auth: AuthContext,
  op: OperationContract,
  input: Record<string, unknown>,
  origin: string,
  j: { id: string; now: number; funding: AdmissionDecision['funding']; maximumMillicents: number },
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
    steps_total: deps.providers.route(op.id, modeOfScope(auth.workspace.id))!.steps(input),
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
