/**
 * The job state machine in one place: the statuses, the changes allowed between them (and who
 * makes each), the event a terminal status publishes, and the fencing rule.
 *
 * Every change of a job is one conditional UPDATE (store.updateJob): it applies only while the job
 * is in one of the expected statuses and, for a worker, while the job still carries the worker's
 * lease token. Concurrent actors (a cancel racing a completion, a recovery racing a slow worker)
 * therefore end in exactly one outcome, and the loser learns it from an update that matched no row.
 *
 * Fencing: a change made WITHOUT the lease (a cancel, a recovery returning the job to the queue)
 * increments `lease_token`, so every earlier holder of the job can no longer write anything to it,
 * not even progress. A change made under the lease keeps the token.
 */
import type { JobStatus } from '../../db/schema.js';
import type { EventType } from '../events/store.js';

export type { JobStatus };
export type TerminalStatus = 'completed' | 'failed' | 'cancelled';

export const JOB_STATUSES: readonly JobStatus[] = ['pending', 'processing', 'completed', 'failed', 'cancelled'];
/** Waiting (pending) or running (processing): counted against the plan's limits, cancellable. */
export const ACTIVE_STATUSES: readonly JobStatus[] = ['pending', 'processing'];
export const TERMINAL_STATUSES: readonly TerminalStatus[] = ['completed', 'failed', 'cancelled'];

/**
 * Allowed changes, from → to:
 * - pending → processing: a worker claims the job (a new lease token); a synchronous run is
 *   admitted directly as processing under its 'sync' lease.
 * - pending → cancelled, processing → cancelled: POST /v1/jobs/{id}/cancel (fences; a processing
 *   job's attempt is fenced out before the provider is asked to stop its work, store.fenceJob).
 * - processing → processing: progress and checkpoints under the lease.
 * - processing → completed | failed: the worker under its lease; a recovery (WORKER_LOST) under
 *   the expired lease's token; a synchronous run past its timeout.
 * - processing → pending: a recovery puts a job whose lease expired back in the queue (fences).
 * - failed → pending: POST /v1/jobs/{id}/retry.
 * Completed and cancelled jobs never change again.
 */
export const TRANSITIONS: Readonly<Record<JobStatus, readonly JobStatus[]>> = {
  pending: ['processing', 'cancelled'],
  processing: ['processing', 'completed', 'failed', 'cancelled', 'pending'],
  failed: ['pending'],
  completed: [],
  cancelled: [],
};

export function canChange(from: JobStatus, to: JobStatus): boolean {
  return TRANSITIONS[from].includes(to);
}

export function isTerminal(status: JobStatus): status is TerminalStatus {
  return (TERMINAL_STATUSES as readonly JobStatus[]).includes(status);
}

/** The outbox event a job's terminal status publishes (with the job's snapshot). */
export const TERMINAL_EVENT: Readonly<Record<TerminalStatus, EventType>> = {
  completed: 'job.completed',
  failed: 'job.failed',
  cancelled: 'job.cancelled',
};
