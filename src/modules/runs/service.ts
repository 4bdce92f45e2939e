/**
 * POST /v1/runs, in one breath: check the operation and its input → claim the Idempotency-Key
 * (replay costs 1 point) → charge the operation's points → lock the workspace and key, decide the
 * admission (waiting-jobs capacity, funding, credits: admission-rules.ts), hold the bounded
 * maximum cost within the budgets, insert the job and store the response.
 *
 * Admission does all of it in ONE transaction that takes the workspace lock first, claim included:
 * a refusal rolls back the claim with everything else, and a concurrent request with the same key
 * finds either nothing or the stored response (on PostgreSQL it waits on the workspace lock or the
 * key's unique index until the first commits), so it replays. A queued run's response is stored
 * in that transaction; a synchronous run's claim stays in flight while it runs (a concurrent
 * duplicate then sees 409 IDEMPOTENCY_IN_PROGRESS) and its response is stored by the transaction
 * that finishes the job.
 */
import type { Deps } from '../../deps.js';
import { lockForUpdate, lockWorkspace } from '../../db/locking.js';
import type { Database } from '../../db/schema.js';
import type { Transaction } from 'kysely';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { OperationContract } from '../../operations/contract.js';
import { operationPoints } from '../../operations/registry.js';
import { hasBudgetCeilings } from '../accounts/types.js';
import type { ApiKey, AuthContext } from '../auth/types.js';
import * as idempotency from '../idempotency/service.js';
import { executeJob } from '../jobs/executor.js';
import { recordChange } from '../jobs/lifecycle.js';
import { toMetadata } from '../jobs/snapshot.js';
import * as jobs from '../jobs/store.js';
import type { JobRow } from '../jobs/store.js';
import { readAdmissionFigures } from './admission-store.js';
import { decideAdmission, newJobRow } from './admission-rules.js';
import { admitInBatch, batchable, type QueuedRun } from './admission-batch.js';
import { hold, spendableCredits } from '../reservations/service.js';
import { checkOperationRequest, personalKeyProvider, priceOf } from '../tools/service.js';
import { chargePoints, chargePointsNow, loadPoints } from '../usage/service.js';
import { inTransaction } from '../../db/group-commit.js';
import { ClientGone } from '../../providers/types.js';

export interface RunRequest {
  operationId: string;
  input: Record<string, unknown>;
  idempotencyKey: string | string[] | undefined;
  executionOrigin: 'api' | 'mcp' | 'web' | 'system';
  /** Told the job id of a synchronous run once it is admitted, before it runs (MCP progress, a streamed answer). */
  onSynchronousJob?: (jobId: string) => void;
  /** The reply's text as it is generated (a streamed chat run, an MCP call with progress): ProviderRun.onText. */
  onText?: (delta: string) => void;
  /**
   * Aborted when the client of a streamed synchronous run goes away: the provider call is stopped
   * and the job is cancelled, charged what was consumed (executor.ts, ClientGone).
   */
  clientGone?: AbortSignal;
}

export interface RunResponse {
  statusCode: 200 | 202;
  body: Record<string, unknown>;
  replayed: boolean;
}

type Trx = Transaction<Database>;

/** True when admission must also lock the key: its budgets sum spending across workspaces. */
export function keyNeedsLock(key: ApiKey | null): boolean {
  return !!key && hasBudgetCeilings(key.budgets);
}

/**
 * Locks the rows admission reads, so concurrent admissions of a workspace (and of a key with
 * budgets) serialise. The workspace comes first, as in every transaction that locks it and job
 * rows (lifecycle.finishJob, claim.claimJobs), so no two of them wait for each other in a cycle.
 */
export async function lockAdmission(deps: Deps, trx: Trx, workspaceId: string, key: ApiKey | null): Promise<void> {
  await lockWorkspace(trx, deps.caps, workspaceId);
  await lockBudgetedKey(deps, trx, key);
}

/** The key's row, when its budgets need it (after the workspace, as lockAdmission takes them). */
async function lockBudgetedKey(deps: Deps, trx: Trx, key: ApiKey | null): Promise<void> {
  if (deps.caps.singleWriter || !keyNeedsLock(key)) return;
  await lockForUpdate(deps.caps, trx.selectFrom('api_keys').select('id').where('id', '=', key!.id)).execute();
}

/**
 * Refusals that come before a run's or retry's points are charged (the operation's weight is
 * charged at admission). Such a request still costs 1 point, as a replay does, so requests that
 * are refused cannot be sent without limit; 402 and 429 refusals at admission come after the
 * charge and cost the operation's points.
 */
const REFUSED_BEFORE_CHARGE = new Set<string>([
  'IDEMPOTENCY_KEY_REQUIRED', 'UNKNOWN_OPERATION', 'OPERATION_UNAVAILABLE', 'FORBIDDEN_OPERATION', 'INVALID_INPUT', 'UNSUPPORTED_MEDIA', 'DOMAIN_NOT_VERIFIED', 'NOT_FOUND',
  'IDEMPOTENCY_CONFLICT', 'IDEMPOTENCY_IN_PROGRESS', 'PERSONAL_PROVIDER_KEY', 'JOB_NOT_RETRYABLE',
]);

/** What to answer for `err`: charges the refusal point first (its own 429 when no point is left). */
export async function chargeRefusal(deps: Deps, auth: AuthContext, err: unknown): Promise<unknown> {
  if (!(err instanceof AppError) || !(REFUSED_BEFORE_CHARGE.has(err.code) || idempotency.isIdempotencyKeyRefusal(err))) return err;
  try {
    await chargePoints(deps, auth.workspace, 1, { keyId: auth.key.id, operation: 'refusal' });
  } catch (limited) {
    return limited;
  }
  return err;
}

export async function startRun(deps: Deps, auth: AuthContext, req: RunRequest): Promise<RunResponse> {
  try {
    return await startRunOnce(deps, auth, req);
  } catch (err) {
    throw await chargeRefusal(deps, auth, err);
  }
}

async function startRunOnce(deps: Deps, auth: AuthContext, req: RunRequest): Promise<RunResponse> {
  const idemKey = idempotency.validateIdempotencyKey(req.idempotencyKey);
  const { op, input } = await checkOperationRequest(deps, auth.key, auth.workspace.id, req.operationId, req.input);
  const scope = { keyId: auth.key.id, workspaceId: auth.workspace.id, idemKey };
  const hash = idempotency.requestHash('POST /v1/runs', { operationId: req.operationId, input: req.input });
  if (op.asynchronous) return enqueueRun(deps, auth, op, input, req.executionOrigin, scope, hash);
  const admitted = await admitSynchronous(deps, auth, op, input, req.executionOrigin, scope, hash);
  if (admitted.kind === 'replay') return replay(deps, auth, admitted);
  req.onSynchronousJob?.(admitted.job.id);
  return runSynchronously(deps, admitted.job, scope, req);
}

/**
 * A synchronous run's claim, points and admission in one transaction (like a queued run's): a
 * refusal rolls the claim back with the rest, so the key is free again; once committed, the claim
 * stays in flight while the operation runs (a concurrent duplicate is 409 IDEMPOTENCY_IN_PROGRESS)
 * and its response is stored by the transaction that finishes the job.
 */
async function admitSynchronous(
  deps: Deps,
  auth: AuthContext,
  op: OperationContract,
  input: Record<string, unknown>,
  origin: RunRequest['executionOrigin'],
  scope: idempotency.IdempotencyScope,
  hash: string,
): Promise<{ kind: 'new'; job: JobRow } | { kind: 'replay'; statusCode: number; body: unknown }> {
  const points = operationPoints(op.id);
  for (let attempt = 1; ; attempt++) {
    await loadPoints(deps, auth.workspace);
    try {
      const batch = keyNeedsLock(auth.key) ? undefined : auth.workspace.id;
      return await inTransaction(deps, async (trx) => {
        await lockWorkspace(trx, deps.caps, auth.workspace.id);
        const claim = await idempotency.claimIn(trx, scope, hash, deps.clock.now());
        if (claim.kind === 'replay') return claim;
        // Counters read from the database here would wait for the connection this transaction holds.
        if (!chargePointsNow(deps, auth.workspace, points, { keyId: auth.key.id, operation: op.id })) throw new PointsNotLoaded();
        return { kind: 'new' as const, job: await admit(deps, trx, auth, op, input, origin) };
      }, batch);
    } catch (err) {
      if (!(err instanceof PointsNotLoaded)) throw err;
      // Counters are dropped only when idle, so a second miss in a row is a fault, not a race.
      if (attempt >= 3) throw new AppError('UNAVAILABLE', { retryAfter: 1 });
    }
  }
}

async function replay(deps: Deps, auth: AuthContext, claim: { statusCode: number; body: unknown }): Promise<RunResponse> {
  await chargePoints(deps, auth.workspace, 1, { keyId: auth.key.id, operation: 'replay' });
  return { statusCode: claim.statusCode as 200 | 202, body: claim.body as Record<string, unknown>, replayed: true };
}

/** Thrown inside the admission transaction when the point counters are not in memory yet. */
class PointsNotLoaded extends Error {}

/**
 * A queued operation: claim, points, admission and the stored response in one transaction, in a
 * batch with the workspace's concurrent runs where admission-batch.ts can decide it.
 */
async function enqueueRun(
  deps: Deps,
  auth: AuthContext,
  op: OperationContract,
  input: Record<string, unknown>,
  origin: string,
  scope: idempotency.IdempotencyScope,
  hash: string,
): Promise<RunResponse> {
  const run: QueuedRun = { auth, op, input, origin, scope, hash, points: operationPoints(op.id) };
  if (batchable(deps, auth)) {
    for (let attempt = 1; ; attempt++) {
      await loadPoints(deps, auth.workspace);
      const outcome = await admitInBatch(deps, run);
      if (outcome.kind === 'new') {
        deps.jobsWakeup();
        return { statusCode: 202, body: outcome.body, replayed: false };
      }
      if (outcome.kind === 'replay') return replay(deps, auth, outcome);
      if (outcome.kind === 'refused') throw outcome.error;
      if (outcome.kind === 'single') break;
      // Counters are dropped only when idle, so a second miss in a row is a fault, not a race.
      if (attempt >= 3) throw new AppError('UNAVAILABLE', { retryAfter: 1 });
    }
  }
  return enqueueSingly(deps, run);
}

/** One run in a transaction of its own (shared only through group commit). */
async function enqueueSingly(deps: Deps, run: QueuedRun): Promise<RunResponse> {
  const { auth, op, input, origin, scope, hash, points } = run;
  for (let attempt = 1; ; attempt++) {
    await loadPoints(deps, auth.workspace);
    try {
      // Admissions of one workspace share a transaction unless a key lock would make a cycle possible.
      const batch = keyNeedsLock(auth.key) ? undefined : auth.workspace.id;
      const outcome = await inTransaction(deps, async (trx) => {
        await lockWorkspace(trx, deps.caps, auth.workspace.id);
        const claim = await idempotency.claimIn(trx, scope, hash, deps.clock.now());
        if (claim.kind === 'replay') return claim;
        // Counters read from the database here would wait for the connection this transaction holds.
        if (!chargePointsNow(deps, auth.workspace, points, { keyId: auth.key.id, operation: op.id })) throw new PointsNotLoaded();
        const job = await admit(deps, trx, auth, op, input, origin);
        const body = { kind: 'job', jobId: job.id, status: job.status, maximumCostMillicents: Number(job.max_cost_mc) };
        await idempotency.complete(trx, scope, 202, body);
        return { kind: 'new' as const, body };
      }, batch);
      if (outcome.kind === 'replay') return replay(deps, auth, outcome);
      deps.jobsWakeup();
      return { statusCode: 202, body: outcome.body, replayed: false };
    } catch (err) {
      if (!(err instanceof PointsNotLoaded)) throw err;
      // Counters are dropped only when idle, so a second miss in a row is a fault, not a race.
      if (attempt >= 3) throw new AppError('UNAVAILABLE', { retryAfter: 1 });
    }
  }
}

async function admit(deps: Deps, trx: Trx, auth: AuthContext, op: OperationContract, input: Record<string, unknown>, origin: string): Promise<JobRow> {
  const now = deps.clock.now();
  const price = priceOf(deps, op, input, auth.workspace.id);
  const id = newId();
  // One read of what admission weighs (under the workspace lock the transaction took first), then
  // the key if its budgets need it.
  const figures = await readAdmissionFigures(trx, deps.caps, auth.workspace.id, personalKeyProvider(deps, op, auth.workspace.id), now);
  await lockBudgetedKey(deps, trx, auth.key);
  const spendable = await spendableCredits(trx, auth.workspace.id, now, figures);
  const situation = { waitingJobs: figures.waitingJobs, ownProviderKey: figures.ownProviderKey, spendableMillicents: spendable };
  const decision = decideAdmission(auth, { queued: op.asynchronous, maximumMillicents: price.maximumMillicents }, situation, now);
  if (decision.funding === 'credits') {
    await hold(trx, now, { workspace: auth.workspace, key: auth.key, jobId: id, maximumMillicents: decision.holdMillicents }, spendable);
  }
  const row = newJobRow(deps, auth, op, input, origin, { id, now, funding: decision.funding, maximumMillicents: price.maximumMillicents });
  await jobs.insertJob(trx, row);
  await recordChange(trx, row, now);
  return row;
}

const SYNC_TIMEOUT_MS = 20_000;

/**
 * The deadline of a synchronous run: aborts with a TimeoutError DOMException, as
 * AbortSignal.timeout does (the executor reads that as PROVIDER_TIMEOUT), but is cleared when
 * the run ends. AbortSignal.timeout cannot be cleared: every run's signal fired 20 s later,
 * building two DOMExceptions with their stacks and waking the listeners the provider SDK leaves
 * on it, and kept the signal, those listeners and the request objects they hold alive until then
 * (about 17,000 runs' worth at 850 runs/s), which the garbage collector paid for.
 */
function runDeadline(ms: number, clientGone: AbortSignal | undefined): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  // A streaming client that goes away stops the run the same way, with its own reason.
  const gone = () => controller.abort(new ClientGone());
  if (clientGone?.aborted) gone();
  else clientGone?.addEventListener('abort', gone, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      clientGone?.removeEventListener('abort', gone);
    },
  };
}

async function runSynchronously(deps: Deps, job: JobRow, scope: idempotency.IdempotencyScope, req: RunRequest): Promise<RunResponse> {
  const deadline = runDeadline(Math.min(SYNC_TIMEOUT_MS, deps.config.jobLeaseMs - 1000), req.clientGone);
  let body: Record<string, unknown> | undefined;
  // The response is stored by the transaction that finishes the job: one write fewer per run.
  let outcome: Awaited<ReturnType<typeof executeJob>>;
  try {
    outcome = await executeJob(deps, job, deadline.signal, {
      alsoInFinish: async (trx, row) => {
        body = syncResponse(row);
        await idempotency.complete(trx, scope, 200, body);
      },
      ...(req.onText ? { onText: req.onText } : {}),
    });
  } finally {
    deadline.clear();
  }
  // The database full: neither the result nor the failure could be recorded. The caller is
  // answered 507; the job, still processing, is failed WORKER_LOST by lease recovery like a
  // synchronous run whose process died, and its key stays claimed until the claim expires.
  if (outcome.status === 'lost' && outcome.error !== undefined) throw outcome.error;
  if (outcome.status === 'lost' || body === undefined) {
    // Another actor finished the job first (a recovery after a lost lease): answer what it recorded.
    const row = outcome.row ?? (await jobs.findJobById(deps.db, job.id))!;
    body = syncResponse(row);
    const stored = body;
    await inTransaction(deps, (trx) => idempotency.complete(trx, scope, 200, stored));
  }
  return { statusCode: 200, body, replayed: false };
}

function syncResponse(row: JobRow): Record<string, unknown> {
  return {
    kind: 'result',
    jobId: row.id,
    status: row.status,
    result: row.output_json === null ? null : JSON.parse(row.output_json),
    errorCode: row.error_code,
    costMillicents: toMetadata(row).costMillicents,
  };
}
