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
 * a key twice in one batch replays the first), points, then the money rules of admission-rules.ts
 * (waiting-jobs capacity, funding, the maximum cost against spendable credits), the same function
 * the one-by-one path calls. A refusal writes nothing for its run; the others are admitted.
 *
 * What the batch does not decide goes the one-by-one way, which stays the reference:
 * - keys or workspaces with budgets (their checks sum spending per period), decided by the caller;
 * - a run whose stored Idempotency-Key has expired (the one-by-one claim replaces it);
 * - the whole batch when credits are due to expire (expiry is settled first), when it would leave
 *   spendable credits below the workspace's low-credits threshold with no credits.low raised that
 *   day (the one-by-one hold raises it in its transaction: modules/alerts), or when the write
 *   fails, e.g. because a synchronous run claimed one of the keys outside the workspace lock in
 *   the meantime (the unique index refuses the second claim; one by one, it replays or conflicts).
 * Points charged in an attempt that does not commit are given back before the runs are decided again.
 */
import type { Kysely } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { remember } from '../../lib/lru.js';
import type { OperationContract } from '../../operations/contract.js';
import { batchTransaction, type BatchRunner } from '../../db/batch-transaction.js';
import { Batcher } from '../../db/batcher.js';
import { hasBudgetCeilings } from '../accounts/types.js';
import type { AuthContext } from '../auth/types.js';
import { lockWorkspaceQuery } from '../accounts/store.js';
import { isGuardFailure } from '../../db/guard.js';
import { storedResponseRow, weighStoredKey, type IdempotencyScope, type StoredKey } from '../idempotency/service.js';
import { jobChangesToNotify } from '../jobs/changes.js';
import { toMetadata } from '../jobs/snapshot.js';
import { personalKeyProvider, priceOf } from '../tools/service.js';
import { chargePointsNow, refundPoints } from '../usage/service.js';
import type { ChargeResult } from '../usage/meter.js';
import { batchFiguresQuery, parseBatchFigures, parseWrittenFigures, writeAdmissionsQuery, type AdmissionWrites, type BatchFigures, type StoredIdempotency } from './admission-batch-store.js';
import { decideAdmission, newJobRow } from './admission-rules.js';
import { isCreditsLow, utcDay } from '../alerts/rules.js';
import { holdRow } from '../reservations/store.js';

export interface QueuedRun {
  auth: AuthContext;
  op: OperationContract;
  input: Record<string, unknown>;
  origin: string;
  scope: IdempotencyScope;
  hash: string;
  points: number;
  /** The charge of the run's points in the current attempt (refunded when the attempt does not commit). */
  charged?: Extract<ChargeResult, { ok: true }>;
}

export type BatchOutcome =
  | { kind: 'new'; body: Record<string, unknown> }
  | { kind: 'replay'; statusCode: number; body: unknown }
  | { kind: 'refused'; error: unknown }
  /** The point counters were not in memory: load them and submit again. */
  | { kind: 'points' }
  /** Admit this run one by one (service.ts). */
  | { kind: 'single' };

/** Whether a queued run of this caller may be admitted in a batch. */
export function batchable(deps: Deps, auth: AuthContext): boolean {
  return deps.caps.batchedWrites && !hasBudgetCeilings(auth.key.budgets) && !hasBudgetCeilings(auth.workspace.budgets);
}

const batchers = new WeakMap<Kysely<Database>, Batcher<QueuedRun, BatchOutcome>>();

/** Admits a queued run together with the runs of its workspace that arrive at the same time. */
export function admitInBatch(deps: Deps, run: QueuedRun): Promise<BatchOutcome> {
  let batcher = batchers.get(deps.db);
  if (!batcher) batchers.set(deps.db, (batcher = new Batcher((_, runs) => runBatch(deps, runs))));
  return batcher.submit(run.auth.workspace.id, run);
}

/** Gives back the points an attempt that did not commit charged, so the next attempt charges anew. */
function refundAttempt(deps: Deps, runs: QueuedRun[]): void {
  for (const run of runs) {
    if (run.charged) refundPoints(deps, run.auth.workspace, run.points, run.charged, { keyId: run.auth.key.id, operation: run.op.id });
    run.charged = undefined;
  }
}

/** Runs one attempt; if it throws, its points are given back first. */
async function attempt<T>(deps: Deps, runs: QueuedRun[], fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    refundAttempt(deps, runs);
    throw err;
  }
}

async function runBatch(deps: Deps, runs: QueuedRun[]): Promise<BatchOutcome[]> {
  for (const run of runs) run.charged = undefined;
  let outcomes: BatchOutcome[] | undefined;
  try {
    outcomes = await admitFromCache(deps, runs);
    if (!outcomes) {
      try {
        outcomes = await attempt(deps, runs, () => batchTransaction(deps, (tx) => admitBatch(deps, tx, runs, 'read')));
      } catch (err) {
        if (!isGuardFailure(err)) throw err;
        // Another writer changed the figures before the lock: decide again under it.
        outcomes = await attempt(deps, runs, () => batchTransaction(deps, (tx) => admitBatch(deps, tx, runs, 'locked')));
      }
    }
  } catch (err) {
    forgetFigures(deps, runs[0]!.auth.workspace.id);
    deps.log.warn({ err, runs: runs.length }, 'batched admission failed; admitting its runs one by one');
    outcomes = runs.map(() => ({ kind: 'single' }));
  }
  deps.metrics.observeBatch('admission', runs.length, outcomes.some((o) => o.kind === 'single'));
  return outcomes;
}

const scopeKey = (s: IdempotencyScope) => `${s.keyId}\n${s.idemKey}`;

type Known = StoredKey;

/**
 * What the last batch of a workspace left, as its write statement saw it under the lock (minus
 * what it admitted): the next batch of a busy workspace decides from these and skips the read,
 * its write re-checking them under the lock (guard.ts). Kept briefly: a stored Idempotency-Key
 * is not among them (the unique index refuses a second claim, and the batch is decided again
 * from a read), and no run is refused from them (a batch with a refusal is decided again from a
 * read, its points given back first).
 */
interface KnownFigures {
  spendableMillicents: number;
  waitingJobs: number;
  /** Provider name → whether the workspace has its own key for it (only providers checked). */
  ownProviders: Map<string, boolean>;
  /** The UTC day whose credits.low the workspace is known to have (null: not known). */
  creditsLowRaisedDay: string | null;
  at: number;
}

const FIGURES_TTL_MS = 2000;
const FIGURES_MAX = 10_000;
const knownFigures = new WeakMap<Kysely<Database>, Map<string, KnownFigures>>();

function figuresOf(deps: Deps): Map<string, KnownFigures> {
  let byWorkspace = knownFigures.get(deps.db);
  if (!byWorkspace) knownFigures.set(deps.db, (byWorkspace = new Map()));
  return byWorkspace;
}

function forgetFigures(deps: Deps, workspaceId: string): void {
  figuresOf(deps).delete(workspaceId);
}

function rememberFigures(deps: Deps, workspaceId: string, figures: KnownFigures): void {
  remember(figuresOf(deps), workspaceId, figures, FIGURES_MAX);
}

/**
 * Whether admitting what was decided raises credits.low: holds were taken, spendable credits after
 * them are below the workspace's threshold and no credits.low was raised that day. The batch
 * writes no alerts: such a batch (at most one a day per workspace) is admitted one by one, whose
 * hold raises the alert in the admission's transaction (reservations/service.ts, modules/alerts).
 * The figures may be older than the lock, but spendable credits can only be higher under it (the
 * write's guard), so "not below" holds there too, and a raised alert is never taken back.
 */
function raisesCreditsLow(run: QueuedRun, decided: Decided, spendableBefore: number, raisedToday: boolean): boolean {
  if (raisedToday || decided.writes.holds.length === 0) return false;
  const admitted = decided.writes.holds.reduce((sum, h) => sum + Number(h.amount_mc), 0);
  return isCreditsLow(run.auth.workspace.lowCreditsMillicents, spendableBefore - admitted);
}

/** Providers the runs' operations use (those a workspace may fund with its own key). */
function providersOf(deps: Deps, runs: QueuedRun[]): string[] {
  return [...new Set(runs.map((r) => personalKeyProvider(deps, r.op, r.auth.workspace.id)).filter((p): p is string => !!p))].sort();
}

/**
 * The one-round-trip path: decides from the figures the workspace's previous batch left and
 * sends lock, guarded write and commit together. Undefined when it cannot decide (no recent
 * figures, a provider not checked yet, a run the figures would refuse) or when the write found
 * the figures changed or an Idempotency-Key already stored: then the batch reads.
 */
async function admitFromCache(deps: Deps, runs: QueuedRun[]): Promise<BatchOutcome[] | undefined> {
  if (!deps.caps.pipelines) return undefined;
  const workspaceId = runs[0]!.auth.workspace.id;
  const now = deps.clock.now();
  const known = figuresOf(deps).get(workspaceId);
  const providers = providersOf(deps, runs);
  if (!known || now - known.at > FIGURES_TTL_MS || providers.some((p) => !known.ownProviders.has(p))) return undefined;
  const figures = {
    waitingJobs: known.waitingJobs,
    ownProviders: new Set(providers.filter((p) => known.ownProviders.get(p))),
    liveMillicents: known.spendableMillicents,
    heldMillicents: 0,
  };
  const decided = decide(deps, runs, workspaceId, figures, new Map(), now);
  // Refusals and replays are decided from read figures and stored keys only, and so is credits.low.
  if (decided.outcomes.some((o) => o.kind !== 'new') || raisesCreditsLow(runs[0]!, decided, known.spendableMillicents, known.creditsLowRaisedDay === utcDay(now))) {
    refundAttempt(deps, runs);
    return undefined;
  }
  try {
    await batchTransaction(deps, (tx) => write(deps, tx, workspaceId, decided, { figures, providers }, known.ownProviders, known.creditsLowRaisedDay, now));
  } catch {
    // Changed figures (guard), a stored Idempotency-Key (unique index) or any other failure.
    refundAttempt(deps, runs);
    forgetFigures(deps, workspaceId);
    return undefined;
  }
  return decided.outcomes;
}

/**
 * Reads the figures and decides. `read`: the read happens before the workspace lock and the write
 * re-checks the figures under it (a guard failure rolls everything back), so the lock is held for
 * one round trip that needs nothing from this process in between; `locked`: lock, then read.
 */
async function admitBatch(deps: Deps, tx: BatchRunner, runs: QueuedRun[], mode: 'read' | 'locked'): Promise<BatchOutcome[]> {
  const now = deps.clock.now();
  const workspaceId = runs[0]!.auth.workspace.id;
  const providers = providersOf(deps, runs);
  const today = utcDay(now);
  const lowDay = runs[0]!.auth.workspace.lowCreditsMillicents === null ? null : today;
  const figuresQuery = batchFiguresQuery(deps.db, workspaceId, providers, runs.map((r) => r.scope), now, lowDay);
  const read = mode === 'read' ? (await tx.run([figuresQuery]))[0] : (await tx.run([lockWorkspaceQuery(deps.db, workspaceId), figuresQuery]))[1];
  const figures = parseBatchFigures(read!.rows);
  if (figures.dueAllocations) {
    await tx.run([], { commit: true });
    forgetFigures(deps, workspaceId);
    return runs.map(() => ({ kind: 'single' }));
  }
  const stored = new Map<string, Known>(figures.idempotency.map((i) => [`${i.keyId}\n${i.idemKey}`, i]));
  const decided = decide(deps, runs, workspaceId, figures, stored, now);
  const checked = new Map(providers.map((p) => [p, figures.ownProviders.has(p)]));
  const raisedDay = figures.creditsLowRaised ? today : null;
  if (raisesCreditsLow(runs[0]!, decided, figures.liveMillicents - figures.heldMillicents, figures.creditsLowRaised)) {
    refundAttempt(deps, runs);
    await tx.run([], { commit: true });
    forgetFigures(deps, workspaceId);
    return runs.map(() => ({ kind: 'single' }));
  }
  if (decided.writes.jobs.length === 0) {
    await tx.run([], { commit: true });
    rememberFigures(deps, workspaceId, {
      spendableMillicents: figures.liveMillicents - figures.heldMillicents,
      waitingJobs: figures.waitingJobs,
      ownProviders: checked,
      creditsLowRaisedDay: raisedDay,
      at: now,
    });
    return decided.outcomes;
  }
  await write(deps, tx, workspaceId, decided, mode === 'read' ? { figures, providers } : undefined, checked, raisedDay, now);
  return decided.outcomes;
}

interface Decided {
  outcomes: BatchOutcome[];
  writes: AdmissionWrites;
}

type Figures = Pick<BatchFigures, 'waitingJobs' | 'ownProviders' | 'liveMillicents' | 'heldMillicents'>;

/** The rules of one-by-one admission applied to the runs in order, each seeing those before it. */
function decide(deps: Deps, runs: QueuedRun[], workspaceId: string, figures: Figures, known: Map<string, Known>, now: number): Decided {
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
      const charged = chargePointsNow(deps, run.auth.workspace, run.points, { keyId: run.auth.key.id, operation: run.op.id });
      if (!charged) {
        outcomes.push({ kind: 'points' });
        continue;
      }
      run.charged = charged;
      const price = priceOf(deps, run.op, run.input, run.auth.workspace.id);
      const provider = personalKeyProvider(deps, run.op, run.auth.workspace.id);
      const situation = { waitingJobs: waiting, ownProviderKey: !!provider && figures.ownProviders.has(provider), spendableMillicents: figures.liveMillicents - held };
      const { funding, holdMillicents } = decideAdmission(run.auth, { queued: true, maximumMillicents: price.maximumMillicents }, situation, now);
      const id = newId();
      const row = newJobRow(deps, run.auth, run.op, run.input, run.origin, { id, now, funding, maximumMillicents: price.maximumMillicents });
      const body = { kind: 'job', jobId: id, status: row.status, maximumCostMillicents: price.maximumMillicents };
      writes.jobs.push(row);
      writes.versions.push({ job_id: id, version: 1, snapshot_json: JSON.stringify(toMetadata(row)), created_at_ms: now });
      if (funding === 'credits') {
        writes.holds.push(holdRow({ id: newId(), workspaceId, jobId: id, keyId: run.auth.key.id, amountMillicents: holdMillicents }, now));
        held += holdMillicents;
      }
      const stored = storedResponseRow({ ...run.scope, workspaceId }, run.hash, 202, JSON.stringify(body), now);
      writes.idempotency.push(stored);
      // The same key again in this batch replays this response.
      known.set(scopeKey(run.scope), { hash: stored.request_hash, state: stored.state, statusCode: stored.status_code, response: stored.response_json, expiresAt: stored.expires_at_ms });
      waiting++;
      outcomes.push({ kind: 'new', body });
    } catch (error) {
      outcomes.push({ kind: 'refused', error });
    }
  }
  return { outcomes, writes };
}

/**
 * Writes what was decided and commits; with `guarded`, takes the workspace lock first and lets
 * the write re-check the figures under it. Remembers the figures the write saw, minus what it
 * admitted, for the workspace's next batch.
 */
async function write(
  deps: Deps,
  tx: BatchRunner,
  workspaceId: string,
  decided: Decided,
  guarded: { figures: Figures; providers: string[] } | undefined,
  ownProviders: Map<string, boolean>,
  creditsLowRaisedDay: string | null,
  now: number,
): Promise<void> {
  const { writes } = decided;
  writes.notify = jobChangesToNotify(deps.db, writes.jobs.map((j) => j.id));
  let result;
  if (guarded) {
    const guard = {
      spendableMillicents: guarded.figures.liveMillicents - guarded.figures.heldMillicents,
      waitingJobs: guarded.figures.waitingJobs,
      providers: guarded.providers,
      ownProviders: guarded.providers.filter((p) => guarded.figures.ownProviders.has(p)),
    };
    result = (await tx.run([lockWorkspaceQuery(deps.db, workspaceId), writeAdmissionsQuery(deps.db, writes, { workspaceId, now }, guard)], { commit: true }))[1];
  } else {
    result = (await tx.run([writeAdmissionsQuery(deps.db, writes, { workspaceId, now })], { commit: true }))[0];
  }
  const seen = parseWrittenFigures(result!.rows);
  const admitted = writes.holds.reduce((sum, h) => sum + Number(h.amount_mc), 0);
  rememberFigures(deps, workspaceId, {
    spendableMillicents: seen.spendableMillicents - admitted,
    waitingJobs: seen.waitingJobs + writes.jobs.filter((j) => j.status === 'pending').length,
    ownProviders,
    creditsLowRaisedDay,
    at: now,
  });
}

/** A stored Idempotency-Key, weighed as claimIn weighs it; an expired one goes the one-by-one way (which replaces it). */
function idempotencyOutcome(stored: Known, hash: string, now: number): BatchOutcome {
  try {
    const weighed = weighStoredKey(stored, hash, now);
    return weighed.kind === 'expired' ? { kind: 'single' } : weighed;
  } catch (error) {
    return { kind: 'refused', error };
  }
}
