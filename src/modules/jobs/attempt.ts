/**
 * One attempt of a job, in parts (executor.ts runs them in order): the context its adapter runs
 * with (progress and step checkpoints under the lease), its finish (retried while the database is
 * unreachable, files removed when it did not commit) and its failure (what the error means for
 * the job: lost to lease recovery, cancelled, or failed with an errorCode and what was consumed).
 */
import type { Deps } from '../../deps.js';
import type { OperationContract } from '../../operations/contract.js';
import { ClientGone, ProviderError, ProviderInterrupted, WorkerShutdown, type MediaAccess, type OperationRoute, type ProducedFile, type ProviderRun } from '../../providers/types.js';
import { findMediaItems, signedMediaUrl, storeGeneratedMedia, writeGeneratedMedia, type MediaRecord } from '../media/service.js';
import { findDomain } from '../domains/store.js';
import { raiseProviderKeyRejected } from '../notifications/service.js';
import { finishJob, LeaseLostError, changeJob, type Checkpoint, type FinishRequest } from './lifecycle.js';
import { finishFields } from './finish-rules.js';
import { inTransaction, inWrite } from '../../db/group-commit.js';
import { isDatabaseUnavailable, retryWhileUnavailable } from '../../db/unavailable.js';
import { fullStorageOf } from '../../lib/storage-full.js';
import * as store from './store.js';
import type { JobRow } from './store.js';

export interface ExecutionOutcome {
  /** cancelled: a synchronous run whose streaming client went away (ClientGone). */
  status: 'completed' | 'failed' | 'cancelled' | 'lost';
  row?: JobRow;
  /**
   * Why a `lost` attempt recorded nothing when it was not another actor's doing: the database full
   * (SQLITE_FULL, disk_full), so that a synchronous run's caller is answered 507, not with the
   * unfinished job.
   */
  error?: unknown;
}

export interface ExecuteOptions {
  /** Writes that belong to the job's finish (a synchronous run's stored response), in its transaction. */
  alsoInFinish?: FinishRequest['alsoInFinish'];
  /** The reply's text as it is generated, for a caller that streams it (ProviderRun.onText). */
  onText?: (delta: string) => void;
}

/** What one attempt holds while it runs. */
export interface Attempt {
  deps: Deps;
  job: JobRow;
  op: OperationContract;
  /** Undefined when the deployment stopped offering the operation after admission. */
  route: OperationRoute | undefined;
  input: Record<string, unknown>;
  /** The lease token: every write of the attempt is fenced by it. */
  token: number;
  cp: Checkpoint;
  signal: AbortSignal;
  options: ExecuteOptions;
  funding: 'credits' | 'provider_key';
  /** This attempt's share of the job's bound (cost_mc holds only earlier attempts until it settles). */
  maximumMillicents: number;
  /** Files of the last step and of the result: their rows are written when the job finishes. */
  lastFiles: MediaRecord[];
  /**
   * The checkpoint as last recorded in the database (before the attempt, or by a step's write):
   * what a failure for a full disk goes back to (storageFullFailure).
   */
  recorded: RecordedCheckpoint;
  startedAt: number;
}

/**
 * Finishes the attempt. The database unreachable (a PostgreSQL restart): the finish is tried again
 * while the lease lasts. A try whose commit was sent may have committed before its answer was
 * lost; the next try (or a batch's fallback to finishing one by one) then finds nothing to change,
 * and the row tells whether this attempt's finish is there. Only when it is not are the files
 * deleted.
 */
export async function finishAttempt(
  a: Attempt,
  req: Omit<FinishRequest, 'workspaceId' | 'from' | 'leaseToken' | 'media' | 'alsoInFinish'>,
  alsoInFinish = a.options.alsoInFinish,
): Promise<JobRow | undefined> {
  const { deps, job } = a;
  let row = await retryWhileUnavailable(
    () => finishJob(deps, job.id, { ...req, workspaceId: job.workspace_id, from: ['processing'], leaseToken: a.token, media: a.lastFiles, ...(alsoInFinish ? { alsoInFinish } : {}) }),
    { withinMs: deps.config.jobLeaseMs, signal: a.signal, onRetry: (err, attempt) => deps.log.warn({ err: { message: (err as Error).message }, jobId: job.id, attempt }, 'database unavailable; finishing the job again') },
  );
  row ??= await finishedByThisAttempt(deps, job.id, a.token, req.status, finishFields({ status: req.status, errorCode: req.errorCode ?? null }, 0).error_code);
  if (!row) await Promise.all(a.lastFiles.map((m) => deps.blobs.delete(m.storageKey).catch(() => {})));
  else if (req.status !== 'cancelled') deps.metrics.observeJobAttempt(a.op.id, a.route?.providerName ?? 'none', req.status, row.error_code, Math.max(0, deps.clock.now() - a.startedAt) / 1000);
  return row;
}

/** What the adapter runs with: the job's input and checkpoint, and the attempt's progress and step writes under the lease. */
export function adapterRun(a: Attempt, route: OperationRoute, extra: Pick<ProviderRun, 'apiKey' | 'voice'>): ProviderRun {
  const { deps, job, cp, signal } = a;
  return {
    jobId: job.id,
    workspaceId: job.workspace_id,
    operation: a.op,
    input: a.input,
    attempt: Number(job.attempt),
    stepsTotal: Number(job.steps_total),
    stepsDone: cp.stepsDone,
    state: cp.state,
    checkpointedFiles: () => cp.files.map((f) => ({ field: f.field, ...(f.index !== undefined ? { index: f.index } : {}), mediaId: String(f.ref.mediaId) })),
    maximumMillicents: a.maximumMillicents,
    signal,
    route,
    funding: a.funding,
    apiKey: extra.apiKey,
    media: mediaAccess(deps, job.workspace_id),
    ...(extra.voice ? { voice: extra.voice } : {}),
    isVerifiedHost: async (hostname) => (await findDomain(deps.db, job.workspace_id, hostname.toLowerCase()))?.status === 'verified',
    charge: (used) => route.charge(used, a.maximumMillicents),
    ...(a.options.onText ? { onText: a.options.onText } : {}),
    progress: async (percentage) => {
      // Completion itself records 100 %, in the transaction that settles the job.
      if (percentage >= 100) return;
      const now = deps.clock.now();
      const changed = await inTransaction(deps, (trx) => changeJob(trx, now, job.id, ['processing'], a.token, { progress: Math.max(0, Math.min(100, percentage)) }));
      if (!changed) throw new LeaseLostError(job.id);
    },
    checkpoint: async (step) => {
      const last = step.stepsDone >= Number(job.steps_total);
      const refs = await storeFiles(deps, job, step.files ?? [], last ? a.lastFiles : undefined);
      cp.files.push(...refs);
      cp.stepsDone = step.stepsDone;
      cp.attemptCost += step.costMillicents;
      if (step.state) cp.state = step.state;
      // The last step is recorded by the finishing transaction, with the result: one write
      // fewer per job. A crash in between re-runs that step, as it would any unrecorded one.
      if (last) return;
      const ok = await inWrite(deps, (db) => store.touchJob(db, job.id, a.token, { checkpoint_json: JSON.stringify(cp), steps_done: cp.stepsDone, updated_at_ms: deps.clock.now() }));
      if (!ok) throw new LeaseLostError(job.id);
      a.recorded = snapshotOf(cp);
    },
  };
}

/** What the attempt's error means for the job (see the comments of each case). */
export async function attemptFailed(a: Attempt, err: unknown): Promise<ExecutionOutcome> {
  const { deps, job, cp, signal } = a;
  if (err instanceof LeaseLostError) return { status: 'lost' };
  // The database unreachable (and the finish's retries over): this attempt records nothing more.
  // Finishing the job failed would blame it for the outage; its lease expires and the job is
  // recovered and run again (worker/job-recovery.ts). Files of a finish that may have committed
  // are kept.
  if (isDatabaseUnavailable(err)) {
    deps.log.warn({ err: { message: (err as Error).message }, jobId: job.id }, 'database unavailable; the job is left to lease recovery');
    return { status: 'lost' };
  }
  // The client of a streamed synchronous run went away: the call was stopped, and the job is
  // cancelled now, charged what the provider had consumed (nobody would receive a later result).
  if (signal.aborted && signal.reason instanceof ClientGone) {
    const row = await finishAttempt(a, { status: 'cancelled', consumedMillicents: cp.attemptCost + interruptedCost(err), checkpoint: cp });
    return row ? { status: 'cancelled', row } : { status: 'lost' };
  }
  // Aborted by the caller (shutdown, lost heartbeat): the lease expires and the job is
  // recovered. Past its deadline (a synchronous run's timeout) it fails here instead: its
  // caller is answered now, and nobody would receive a result produced later.
  if (signal.aborted && !isDeadline(signal.reason)) return { status: 'lost' };
  // A local engine's program stopped with the whole service (a signal to its process group).
  if (err instanceof WorkerShutdown) return { status: 'lost' };
  const failure = await failureOf(a, err);
  if (!failure) deps.log.error({ err, jobId: job.id }, 'job execution failed unexpectedly');
  if (failure?.code === 'PROVIDER_AUTH' && a.funding === 'provider_key' && a.route) {
    const now = deps.clock.now();
    await inWrite(deps, (db) => raiseProviderKeyRejected(db, { workspaceId: job.workspace_id, provider: a.route!.providerName, jobId: job.id }, now)).catch((e: unknown) =>
      deps.log.error({ err: e, jobId: job.id }, 'could not record the provider key notification'),
    );
  }
  let row: JobRow | undefined;
  try {
    row = await finishAttempt(a, { status: 'failed', consumedMillicents: cp.attemptCost + (failure?.consumedMillicents ?? 0), errorCode: failure?.code ?? 'INTERNAL_ERROR', checkpoint: cp });
  } catch (finishErr) {
    // The database itself full (SQLITE_FULL, disk_full): the failure cannot be recorded either.
    // Its transaction was rolled back whole, so this attempt changed nothing; the files it wrote
    // for the finish are removed and the job is left to lease recovery, which runs it again
    // (once there is space) with its hold still open.
    if (!fullStorageOf(finishErr)) throw finishErr;
    deps.log.error({ err: { message: (finishErr as Error).message, code: (finishErr as { code?: unknown }).code }, jobId: job.id }, 'storage full; the job could not be finished and is left to lease recovery');
    await Promise.all(a.lastFiles.map((m) => deps.blobs.delete(m.storageKey).catch(() => {})));
    return { status: 'lost', error: finishErr };
  }
  return row ? { status: 'failed', row } : { status: 'lost' };
}

/**
 * The job's failure for an error: a deadline is PROVIDER_TIMEOUT, a provider's error its own, a
 * full disk STORAGE_FULL (after undoing what could not be recorded); undefined for anything else
 * (INTERNAL_ERROR).
 */
async function failureOf(a: Attempt, err: unknown): Promise<ProviderError | undefined> {
  const full = a.signal.aborted || err instanceof ProviderError ? undefined : fullStorageOf(err);
  if (full) await storageFullFailure(a.deps, a.job, a.cp, a.recorded, a.lastFiles, full, err);
  if (a.signal.aborted) return new ProviderError('PROVIDER_TIMEOUT', 'The operation did not finish in time.', interruptedCost(err));
  if (err instanceof ProviderError) return err;
  if (full) return new ProviderError('STORAGE_FULL', `The server's ${full === 'files' ? 'media' : 'database'} storage is full: the job's files or result could not be stored.`);
  return undefined;
}

/**
 * Stores produced files as media items. With `deferred`, only the blobs are written and the
 * records join that list, to be inserted by the transaction that finishes the job.
 */
export async function storeFiles(deps: Deps, job: JobRow, files: ProducedFile[], deferred?: MediaRecord[]): Promise<Checkpoint['files']> {
  const refs: Checkpoint['files'] = [];
  for (const f of files) {
    const input = { workspaceId: job.workspace_id, jobId: job.id, name: f.name, mimeType: f.mimeType, bytes: f.bytes };
    let item: MediaRecord;
    if (deferred) {
      item = await writeGeneratedMedia(deps, input);
      deferred.push(item);
    } else {
      item = await storeGeneratedMedia(deps, input);
    }
    refs.push({ field: f.field, ...(f.index !== undefined ? { index: f.index } : {}), ref: { mediaId: item.id, name: item.name, mimeType: item.mimeType, sizeBytes: item.sizeBytes, sha256: item.sha256 } });
  }
  return refs;
}

/** The parts of a checkpoint a failure for a full disk restores (storageFullFailure). */
interface RecordedCheckpoint {
  stepsDone: number;
  attemptCost: number;
  files: number;
  state: Record<string, unknown>;
}

export function snapshotOf(cp: Checkpoint): RecordedCheckpoint {
  return { stepsDone: cp.stepsDone, attemptCost: cp.attemptCost, files: cp.files.length, state: cp.state };
}

/**
 * A job whose files or result could not be stored because the server's storage is full fails with
 * STORAGE_FULL, and nothing of what could not be recorded stays: the blobs written for the finish
 * (the last step's and the result's files, whose rows the finish would have written) are removed,
 * and the checkpoint goes back to the one last recorded, so the unrecorded last step is neither
 * charged nor counted as done (a retry runs it again). Steps recorded before keep their files
 * (media items of their own) and their cost, as for any failure.
 */
async function storageFullFailure(deps: Deps, job: JobRow, cp: Checkpoint, recorded: RecordedCheckpoint, lastFiles: MediaRecord[], full: 'files' | 'database', err: unknown): Promise<void> {
  deps.log.error({ err: { message: (err as Error).message, code: (err as { code?: unknown }).code }, storage: full, jobId: job.id }, 'storage full; the job fails with STORAGE_FULL');
  await Promise.all(lastFiles.map((m) => deps.blobs.delete(m.storageKey).catch(() => {})));
  lastFiles.length = 0;
  cp.stepsDone = recorded.stepsDone;
  cp.attemptCost = recorded.attemptCost;
  cp.files.length = recorded.files;
  cp.state = recorded.state;
}

/**
 * The job as this attempt's finish left it, when a repeated finish found nothing to change: still
 * under the attempt's lease token (a cancel or a recovery fences it) with the status and error code
 * the attempt wrote. Undefined when someone else finished or took the job.
 */
async function finishedByThisAttempt(deps: Deps, jobId: string, token: number, status: string, errorCode: string | null): Promise<JobRow | undefined> {
  const row = await store.findJobById(deps.db, jobId);
  if (!row || Number(row.lease_token) !== token || row.status !== status || (row.error_code ?? null) !== errorCode) return undefined;
  return row;
}

/** Workspace media for adapters: only items of the job's workspace are ever found. */
function mediaAccess(deps: Deps, workspaceId: string): MediaAccess {
  const find = async (mediaId: string) => {
    const [item] = await findMediaItems(deps, workspaceId, [mediaId]);
    if (!item) throw new ProviderError('PROVIDER_REJECTED', 'A media input of the job no longer exists.');
    return item;
  };
  return {
    async signedUrl(mediaId) {
      return (await signedMediaUrl(deps, await find(mediaId), deps.clock.now())).url;
    },
    async read(mediaId) {
      const item = await find(mediaId);
      const stream = await deps.blobs.read(item.storageKey);
      return { bytes: Buffer.concat((await stream.toArray()) as Buffer[]), mimeType: item.mimeType, sha256: item.sha256 };
    },
  };
}

/** What a call stopped by its caller had consumed, when its adapter can tell (a streamed chat). */
function interruptedCost(err: unknown): number {
  return err instanceof ProviderInterrupted ? err.consumedMillicents : 0;
}

/** True for the reason of an AbortSignal.timeout() that fired. */
export function isDeadline(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}
