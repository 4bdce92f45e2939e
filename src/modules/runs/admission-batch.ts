/**
 * Batched admission of queued runs on PostgreSQL. Admissions of one workspace serialise on its
 * row lock, and one admission used to be about ten statements under that lock, each a round trip
 * (and on a busy server most of the CPU of both processes). Runs of one workspace that arrive
 * together are admitted here in one transaction of two round trips whatever their number: one
 * read of the figures and stored Idempotency-Keys; then the workspace lock, one write that
 * re-checks the figures under it (db/guard.ts), and the commit. If the figures changed in between
 * (another process admitted), the batch is decided again with the lock taken before the read.
 *
 * The rules are those of the one-by-one path (service.ts), applied to the runs in arrival order,
 * each seeing the ones before it: Idempotency-Key (a stored response replays, another request
 * body is 409 IDEMPOTENCY_CONFLICT, a synchronous run still in flight 409 IDEMPOTENCY_IN_PROGRESS;
 * a key twice in one batch replays the first), points, waiting-jobs capacity, the maximum cost
 * against spendable credits. A refusal writes nothing for its run; the others are admitted.
 *
 * What the batch does not decide goes the one-by-one way, which stays the reference:
 * - keys or workspaces with budgets (their checks sum spending per period), decided by the caller;
 * - a run whose stored Idempotency-Key has expired (the one-by-one claim replaces it);
 * - the whole batch when credits are due to expire (expiry is settled first) or when the write
 *   fails, e.g. because a synchronous run claimed one of the keys outside the workspace lock in
 *   the meantime (the unique index refuses the second claim; one by one, it replays or conflicts).
 * Points charged for a run in a batch that fell back are not charged again.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { OperationContract } from '../../operations/contract.js';
import { providerNameFor } from '../../providers/registry.js';
import { batchTransaction, type BatchRunner } from '../../queue/batch-transaction.js';
import { Batcher } from '../../queue/batcher.js';
import type { BudgetCeilings } from '../accounts/types.js';
import type { AuthContext } from '../auth/types.js';
import { lockWorkspaceQuery } from '../accounts/store.js';
import { isGuardFailure } from '../../db/guard.js';
import { IDEMPOTENCY_TTL_MS, type IdempotencyScope } from '../idempotency/service.js';
import { jobChangesToNotify } from '../jobs/changes.js';
import { toMetadata } from '../jobs/snapshot.js';
import { insufficientCredits } from '../reservations/service.js';
import { priceOf } from '../tools/service.js';
import { chargePointsNow } from '../usage/service.js';
import { batchFiguresQuery, parseBatchFigures, writeAdmissionsQuery, type AdmissionWrites, type StoredIdempotency } from './admission-batch-store.js';
import { newJobRow, refuseWhenQueueFull } from './admission-rules.js';

export interface QueuedRun {
  auth: AuthContext;
  op: OperationContract;
  input: Record<string, unknown>;
  origin: string;
  scope: IdempotencyScope;
  hash: string;
  points: number;
  /** Set once the run's points were charged (a run that falls back is not charged twice). */
  pointsCharged: boolean;
}

export type BatchOutcome =
  | { kind: 'new'; body: Record<string, unknown> }
  | { kind: 'replay'; statusCode: number; body: unknown }
  | { kind: 'refused'; error: unknown }
  /** The point counters were not in memory: load them and submit again. */
  | { kind: 'points' }
  /** Admit this run one by one (service.ts). */
  | { kind: 'single' };

function hasCeilings(b: BudgetCeilings | null | undefined): boolean {
  return !!b && (b.dailyMillicents !== null || b.weeklyMillicents !== null || b.monthlyMillicents !== null);
}

/** Whether a queued run of this caller may be admitted in a batch. */
export function batchable(deps: Deps, auth: AuthContext): boolean {
  return deps.caps.dialect === 'postgres' && !hasCeilings(auth.key.budgets) && !hasCeilings(auth.workspace.budgets);
}

const batchers = new WeakMap<Kysely<Database>, Batcher<QueuedRun, BatchOutcome>>();

/** Admits a queued run together with the runs of its workspace that arrive at the same time. */
export function admitInBatch(deps: Deps, run: QueuedRun): Promise<BatchOutcome> {
  let batcher = batchers.get(deps.db);
  if (!batcher) batchers.set(deps.db, (batcher = new Batcher((_, runs) => runBatch(deps, runs))));
  return batcher.submit(run.auth.workspace.id, run);
}

async function runBatch(deps: Deps, runs: QueuedRun[]): Promise<BatchOutcome[]> {
  let outcomes: BatchOutcome[];
  try {
    try {
      outcomes = await batchTransaction(deps, (tx) => admitBatch(deps, tx, runs, true));
    } catch (err) {
      if (!isGuardFailure(err)) throw err;
      // Another writer changed the figures before the lock: decide again under it.
      outcomes = await batchTransaction(deps, (tx) => admitBatch(deps, tx, runs, false));
    }
  } catch (err) {
    deps.log.warn({ err, runs: runs.length }, 'batched admission failed; admitting its runs one by one');
    outcomes = runs.map(() => ({ kind: 'single' }));
  }
  deps.metrics.observeBatch('admission', runs.length, outcomes.some((o) => o.kind === 'single'));
  return outcomes;
}

const scopeKey = (s: IdempotencyScope) => `${s.keyId}\n${s.idemKey}`;

type Known = Pick<StoredIdempotency, 'hash' | 'state' | 'statusCode' | 'response' | 'expiresAt'>;

/**
 * Decides and writes a batch. `optimistic`: the figures are read before the workspace lock and the
 * write re-checks them under it (a guard failure rolls everything back), so the lock is held for
 * one round trip that needs nothing from this process in between; otherwise lock, then read.
 */
async function admitBatch(deps: Deps, tx: BatchRunner, runs: QueuedRun[], optimistic: boolean): Promise<BatchOutcome[]> {
  const now = deps.clock.now();
  const workspaceId = runs[0]!.auth.workspace.id;
  const providers = [...new Set(runs.map((r) => providerNameFor(r.op)).filter((p): p is string => !!p))];
  const figuresQuery = batchFiguresQuery(deps.db, workspaceId, providers, runs.map((r) => r.scope), now);
  const read = optimistic ? (await tx.run([figuresQuery]))[0] : (await tx.run([lockWorkspaceQuery(deps.db, workspaceId), figuresQuery]))[1];
  const figures = parseBatchFigures(read!.rows);
  if (figures.dueAllocations) {
    await tx.run([], { commit: true });
    return runs.map(() => ({ kind: 'single' }));
  }
  const known = new Map<string, Known>(figures.idempotency.map((i) => [`${i.keyId}\n${i.idemKey}`, i]));
  let waiting = figures.waitingJobs;
  let held = figures.heldMillicents;
  const writes: AdmissionWrites = { jobs: [], holds: [], versions: [], idempotency: [], notify: [] };
  const outcomes: BatchOutcome[] = [];
  for (const run of runs) {
    const stored = known.get(scopeKey(run.scope));
    if (stored) {
      outcomes.push(idempotencyOutcome(stored, run.hash, now));
      continue;
    }
    try {
      if (!run.pointsCharged) {
        if (!chargePointsNow(deps, run.auth.workspace, run.points)) {
          outcomes.push({ kind: 'points' });
          continue;
        }
        run.pointsCharged = true;
      }
      refuseWhenQueueFull(run.auth, waiting, now);
      const price = priceOf(run.op, run.input);
      const provider = providerNameFor(run.op);
      const funding = provider && figures.ownProviders.has(provider) ? 'provider_key' : 'credits';
      if (funding === 'credits' && figures.liveMillicents - held < price.maximumMillicents) {
        throw insufficientCredits(figures.liveMillicents - held, price.maximumMillicents);
      }
      const id = newId();
      const row = newJobRow(deps, run.auth, run.op, run.input, run.origin, { id, now, funding, maximumMillicents: price.maximumMillicents });
      const body = { kind: 'job', jobId: id, status: row.status, maximumCostMillicents: price.maximumMillicents };
      writes.jobs.push(row);
      writes.versions.push({ job_id: id, version: 1, snapshot_json: JSON.stringify(toMetadata(row)), created_at_ms: now });
      if (funding === 'credits') {
        writes.holds.push({ id: newId(), workspace_id: workspaceId, job_id: id, key_id: run.auth.key.id, amount_mc: price.maximumMillicents, created_at_ms: now, released_at_ms: null });
        held += price.maximumMillicents;
      }
      const response = JSON.stringify(body);
      writes.idempotency.push({
        key_id: run.scope.keyId,
        workspace_id: workspaceId,
        idem_key: run.scope.idemKey,
        request_hash: run.hash,
        state: 'done',
        status_code: 202,
        response_json: response,
        created_at_ms: now,
        expires_at_ms: now + IDEMPOTENCY_TTL_MS,
      });
      // The same key again in this batch replays this response.
      known.set(scopeKey(run.scope), { hash: run.hash, state: 'done', statusCode: 202, response, expiresAt: now + IDEMPOTENCY_TTL_MS });
      waiting++;
      outcomes.push({ kind: 'new', body });
    } catch (error) {
      outcomes.push({ kind: 'refused', error });
    }
  }
  if (writes.jobs.length === 0) {
    await tx.run([], { commit: true });
    return outcomes;
  }
  writes.notify = jobChangesToNotify(deps.db, writes.jobs.map((j) => j.id));
  if (optimistic) {
    const guard = { workspaceId, now, spendableMillicents: figures.liveMillicents - figures.heldMillicents, waitingJobs: figures.waitingJobs };
    await tx.run([lockWorkspaceQuery(deps.db, workspaceId), writeAdmissionsQuery(deps.db, writes, guard)], { commit: true });
  } else {
    await tx.run([writeAdmissionsQuery(deps.db, writes)], { commit: true });
  }
  return outcomes;
}

/** A stored Idempotency-Key, as idempotency.claimIn weighs it. */
function idempotencyOutcome(stored: Known, hash: string, now: number): BatchOutcome {
  if (stored.expiresAt <= now) return { kind: 'single' };
  if (stored.hash !== hash) return { kind: 'refused', error: new AppError('IDEMPOTENCY_CONFLICT') };
  if (stored.state !== 'done') return { kind: 'refused', error: new AppError('IDEMPOTENCY_IN_PROGRESS', { retryAfter: 1 }) };
  return { kind: 'replay', statusCode: Number(stored.statusCode), body: JSON.parse(stored.response as string) };
}
