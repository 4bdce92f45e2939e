/**
 * Runs one attempt of a job this process holds the lease of (queued jobs claimed by a worker,
 * or synchronous runs). Steps are checkpointed with the lease token; finishing settles the
 * attempt in the same transaction as the status change. If the lease is lost (cancelled,
 * recovered after a pause), the attempt stops without changing anything.
 */
import { modeOfScope } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { findOperation } from '../../operations/registry.js';
import type { OperationRoute } from '../../providers/types.js';
import { ClientGone, ProviderError, ProviderInterrupted, WorkerShutdown, type MediaAccess, type ProducedFile } from '../../providers/types.js';
import { findMediaItems, signedMediaUrl, storeGeneratedMedia, writeGeneratedMedia, type MediaRecord } from '../media/service.js';
import { readProviderKey } from '../provider-keys/service.js';
import { voiceForAttempt } from '../voices/service.js';
import { prepareClonedVoice } from '../voices/clone-finish.js';
import { findDomain } from '../domains/store.js';
import { raiseProviderKeyRejected } from '../notifications/service.js';
import { finishJob, LeaseLostError, readCheckpoint, changeJob, type Checkpoint, type FinishRequest } from './lifecycle.js';
import { MAX_RESULT_BYTES } from './output.js';
import { finishFields } from './finish-rules.js';
import { inTransaction, inWrite } from '../../db/group-commit.js';
import { isDatabaseUnavailable, retryWhileUnavailable } from '../../db/unavailable.js';
import { fullStorageOf } from '../../lib/storage-full.js';
import * as store from './store.js';
import type { JobRow } from './store.js';

/** Stored results leave room for the signed file URLs added when the result is read (16 MiB bound). */
const MAX_STORED_RESULT_BYTES = MAX_RESULT_BYTES - 256 * 1024;

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

/**
 * Stores produced files as media items. With `deferred`, only the blobs are written and the
 * records join that list, to be inserted by the transaction that finishes the job.
 */
async function storeFiles(deps: Deps, job: JobRow, files: ProducedFile[], deferred?: MediaRecord[]): Promise<Checkpoint['files']> {
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

/** Puts file references into the result: a field with an index becomes a list. */
function assemble(data: Record<string, unknown>, files: Checkpoint['files']): Record<string, unknown> {
  const result: Record<string, unknown> = { ...data };
  const lists = new Map<string, { index: number; ref: unknown }[]>();
  for (const f of files) {
    if (f.index === undefined) result[f.field] = f.ref;
    else lists.set(f.field, [...(lists.get(f.field) ?? []), { index: f.index, ref: f.ref }]);
  }
  for (const [field, items] of lists) result[field] = items.sort((a, b) => a.index - b.index).map((i) => i.ref);
  return result;
}

export interface ExecuteOptions {
  /** Writes that belong to the job's finish (a synchronous run's stored response), in its transaction. */
  alsoInFinish?: FinishRequest['alsoInFinish'];
  /** The reply's text as it is generated, for a caller that streams it (ProviderRun.onText). */
  onText?: (delta: string) => void;
}

/** Both writes of a finish, in order (either may be absent). */
function alsoBoth(first: FinishRequest['alsoInFinish'], second: FinishRequest['alsoInFinish']): FinishRequest['alsoInFinish'] {
  if (!first || !second) return first ?? second;
  return async (trx, row) => {
    await first(trx, row);
    await second(trx, row);
  };
}

export async function executeJob(deps: Deps, job: JobRow, signal: AbortSignal, options: ExecuteOptions = {}): Promise<ExecutionOutcome> {
  const op = findOperation(job.operation_id);
  const token = Number(job.lease_token);
  const cp = readCheckpoint(job);
  if (!op) {
    const row = await finishJob(deps, job.id, { workspaceId: job.workspace_id, status: 'failed', from: ['processing'], leaseToken: token, consumedMillicents: cp.attemptCost, errorCode: 'UNKNOWN_OPERATION', ...(options.alsoInFinish ? { alsoInFinish: options.alsoInFinish } : {}) });
    return row ? { status: 'failed', row } : { status: 'lost' };
  }
  const input = JSON.parse(job.input_json) as Record<string, unknown>;
  const route = deps.providers.route(op.id, modeOfScope(job.workspace_id));
  if (route) {
    // Recorded with the attempt's checkpoint or finish (no write of its own), for operators.
    cp.provider = route.providerName;
    cp.model = route.model;
  }
  // Files of the last step and of the result: their rows are written when the job finishes.
  const lastFiles: MediaRecord[] = [];
  // The checkpoint as last recorded in the database (before the attempt, or by a step's write):
  // what a failure for a full disk goes back to (storageFullFailure).
  let recorded = snapshotOf(cp);
  const attemptStart = deps.clock.now();
  const finish = async (req: Omit<FinishRequest, 'workspaceId' | 'from' | 'leaseToken' | 'media' | 'alsoInFinish'>, alsoInFinish = options.alsoInFinish) => {
    // The database unreachable (a PostgreSQL restart): the finish is tried again while the lease
    // lasts. A try whose commit was sent may have committed before its answer was lost; the next
    // try (or a batch's fallback to finishing one by one) then finds nothing to change, and the
    // row tells whether this attempt's finish is there. Only when it is not are the files deleted.
    let row = await retryWhileUnavailable(
      () =>
        finishJob(deps, job.id, {
          ...req,
          workspaceId: job.workspace_id,
          from: ['processing'],
          leaseToken: token,
          media: lastFiles,
          ...(alsoInFinish ? { alsoInFinish } : {}),
        }),
      { withinMs: deps.config.jobLeaseMs, signal, onRetry: (err, attempt) => deps.log.warn({ err: { message: (err as Error).message }, jobId: job.id, attempt }, 'database unavailable; finishing the job again') },
    );
    row ??= await finishedByThisAttempt(deps, job.id, token, req.status, finishFields({ status: req.status, errorCode: req.errorCode ?? null }, 0).error_code);
    if (!row) await Promise.all(lastFiles.map((m) => deps.blobs.delete(m.storageKey).catch(() => {})));
    else if (req.status !== 'cancelled') deps.metrics.observeJobAttempt(op.id, route?.providerName ?? 'none', req.status, row.error_code, Math.max(0, deps.clock.now() - attemptStart) / 1000);
    return row;
  };
  const funding = job.funding === 'provider_key' ? 'provider_key' : 'credits';
  // This attempt's share of the job's bound (cost_mc holds only earlier attempts until it settles).
  const maximumMillicents = Math.max(0, Number(job.max_cost_mc) - Number(job.cost_mc));
  try {
    // The deployment stopped offering the operation after the job was admitted (providers file changed).
    if (!route) throw new ProviderError('OPERATION_UNAVAILABLE', 'The operation is not offered by this deployment any more.');
    const apiKey = await providerKeyFor(deps, job, route, funding);
    // The workspace voice the input names (read now: one deleted since admission fails the job).
    const voice = await voiceForAttempt(deps, job.workspace_id, op, input);
    const result = await providerCall(deps, route, signal, () =>
      route.adapter.run({
        jobId: job.id,
        workspaceId: job.workspace_id,
        operation: op,
        input,
        attempt: Number(job.attempt),
        stepsTotal: Number(job.steps_total),
        stepsDone: cp.stepsDone,
        state: cp.state,
        checkpointedFiles: () => cp.files.map((f) => ({ field: f.field, ...(f.index !== undefined ? { index: f.index } : {}), mediaId: String(f.ref.mediaId) })),
        maximumMillicents,
        signal,
        route,
        funding,
        apiKey,
        media: mediaAccess(deps, job.workspace_id),
        ...(voice ? { voice } : {}),
        isVerifiedHost: async (hostname) => (await findDomain(deps.db, job.workspace_id, hostname.toLowerCase()))?.status === 'verified',
        charge: (used) => route.charge(used, maximumMillicents),
        ...(options.onText ? { onText: options.onText } : {}),
        progress: async (percentage) => {
          // Completion itself records 100 %, in the transaction that settles the job.
          if (percentage >= 100) return;
          const now = deps.clock.now();
          const changed = await inTransaction(deps, (trx) =>
            changeJob(trx, now, job.id, ['processing'], token, { progress: Math.max(0, Math.min(100, percentage)) }),
          );
          if (!changed) throw new LeaseLostError(job.id);
        },
        checkpoint: async (step) => {
          const last = step.stepsDone >= Number(job.steps_total);
          const refs = await storeFiles(deps, job, step.files ?? [], last ? lastFiles : undefined);
          cp.files.push(...refs);
          cp.stepsDone = step.stepsDone;
          cp.attemptCost += step.costMillicents;
          if (step.state) cp.state = step.state;
          // The last step is recorded by the finishing transaction, with the result: one write
          // fewer per job. A crash in between re-runs that step, as it would any unrecorded one.
          if (last) return;
          const ok = await inWrite(deps, (db) =>
            store.touchJob(db, job.id, token, {
              checkpoint_json: JSON.stringify(cp),
              steps_done: cp.stepsDone,
              updated_at_ms: deps.clock.now(),
            }),
          );
          if (!ok) throw new LeaseLostError(job.id);
          recorded = snapshotOf(cp);
        },
      }),
    );
    const refs = await storeFiles(deps, job, result.files, lastFiles);
    const assembled = assemble(result.data, [...cp.files, ...refs]);
    if (Buffer.byteLength(JSON.stringify(assembled)) > MAX_STORED_RESULT_BYTES) {
      throw new ProviderError('OUTPUT_TOO_LARGE', 'The result exceeds the 16 MiB bound of a public job result.', result.costMillicents);
    }
    // A voice.clone job's workspace voice is written by the transaction that completes it.
    const cloned = await prepareClonedVoice(deps, job, input, route, assembled);
    const output = cloned?.output ?? assembled;
    const row = await finish(
      {
        status: 'completed',
        consumedMillicents: cp.attemptCost + result.costMillicents,
        output,
        checkpoint: cp,
      },
      alsoBoth(options.alsoInFinish, cloned?.write),
    );
    return row ? { status: 'completed', row } : { status: 'lost' };
  } catch (err) {
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
      const row = await finish({ status: 'cancelled', consumedMillicents: cp.attemptCost + interruptedCost(err), checkpoint: cp });
      return row ? { status: 'cancelled', row } : { status: 'lost' };
    }
    // Aborted by the caller (shutdown, lost heartbeat): the lease expires and the job is
    // recovered. Past its deadline (a synchronous run's timeout) it fails here instead: its
    // caller is answered now, and nobody would receive a result produced later.
    if (signal.aborted && !isDeadline(signal.reason)) return { status: 'lost' };
    // A local engine's program stopped with the whole service (a signal to its process group).
    if (err instanceof WorkerShutdown) return { status: 'lost' };
    const full = signal.aborted || err instanceof ProviderError ? undefined : fullStorageOf(err);
    if (full) await storageFullFailure(deps, job, cp, recorded, lastFiles, full, err);
    const failure = signal.aborted
      ? new ProviderError('PROVIDER_TIMEOUT', 'The operation did not finish in time.', interruptedCost(err))
      : err instanceof ProviderError
        ? err
        : full
          ? new ProviderError('STORAGE_FULL', `The server's ${full === 'files' ? 'media' : 'database'} storage is full: the job's files or result could not be stored.`)
          : undefined;
    if (!failure) deps.log.error({ err, jobId: job.id }, 'job execution failed unexpectedly');
    if (failure?.code === 'PROVIDER_AUTH' && funding === 'provider_key' && route) {
      const now = deps.clock.now();
      await inWrite(deps, (db) => raiseProviderKeyRejected(db, { workspaceId: job.workspace_id, provider: route.providerName, jobId: job.id }, now)).catch((e: unknown) =>
        deps.log.error({ err: e, jobId: job.id }, 'could not record the provider key notification'),
      );
    }
    let row: JobRow | undefined;
    try {
      row = await finish({
        status: 'failed',
        consumedMillicents: cp.attemptCost + (failure?.consumedMillicents ?? 0),
        errorCode: failure?.code ?? 'INTERNAL_ERROR',
        checkpoint: cp,
      });
    } catch (finishErr) {
      // The database itself full (SQLITE_FULL, disk_full): the failure cannot be recorded either.
      // Its transaction was rolled back whole, so this attempt changed nothing; the files it wrote
      // for the finish are removed and the job is left to lease recovery, which runs it again
      // (once there is space) with its hold still open.
      if (!fullStorageOf(finishErr)) throw finishErr;
      deps.log.error({ err: { message: (finishErr as Error).message, code: (finishErr as { code?: unknown }).code }, jobId: job.id }, 'storage full; the job could not be finished and is left to lease recovery');
      await Promise.all(lastFiles.map((m) => deps.blobs.delete(m.storageKey).catch(() => {})));
      return { status: 'lost', error: finishErr };
    }
    return row ? { status: 'failed', row } : { status: 'lost' };
  }
}

/** The parts of a checkpoint a failure for a full disk restores (storageFullFailure). */
interface RecordedCheckpoint {
  stepsDone: number;
  attemptCost: number;
  files: number;
  state: Record<string, unknown>;
}

function snapshotOf(cp: Checkpoint): RecordedCheckpoint {
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

/**
 * One provider call (an attempt's adapter run), counted in /metrics with its duration and, when
 * it fails, the job errorCode it gives. A call cut short by the lease (a cancel, a lost heartbeat)
 * or by shutdown is not the provider's outcome and is not counted; a deadline is PROVIDER_TIMEOUT.
 */
async function providerCall<T>(deps: Deps, route: OperationRoute, signal: AbortSignal, call: () => Promise<T>): Promise<T> {
  const start = deps.clock.now();
  const observe = (errorCode: string | null) => deps.metrics.observeProviderCall(route.providerName, route.operation.id, errorCode, Math.max(0, deps.clock.now() - start) / 1000);
  try {
    const result = await call();
    observe(null);
    return result;
  } catch (err) {
    if (signal.aborted && isDeadline(signal.reason)) observe('PROVIDER_TIMEOUT');
    else if (err instanceof ProviderError) observe(err.code);
    else if (!(err instanceof LeaseLostError) && !signal.aborted) observe(fullStorageOf(err) ? 'STORAGE_FULL' : 'INTERNAL_ERROR');
    throw err;
  }
}

/**
 * A user's cancel of a processing job: stops the remote work its attempt started (a prediction)
 * and returns what the provider reports as consumed, at the route's prices, within the attempt's
 * share of the hold. 0 when the route has no remote work to stop or the provider cannot be asked
 * (the attempt, fenced out, then cancels it itself, best effort).
 */
export async function cancelRemoteWork(deps: Deps, job: JobRow): Promise<number> {
  const route = deps.providers.route(job.operation_id, modeOfScope(job.workspace_id));
  if (!route?.adapter.cancel) return 0;
  const funding = job.funding === 'provider_key' ? 'provider_key' : 'credits';
  let apiKey: string | undefined;
  try {
    apiKey = await providerKeyFor(deps, job, route, funding);
  } catch {
    return 0;
  }
  const used = await route.adapter.cancel({
    jobId: job.id,
    workspaceId: job.workspace_id,
    operation: route.operation,
    input: JSON.parse(job.input_json) as Record<string, unknown>,
    attempt: Number(job.attempt),
    state: readCheckpoint(job).state,
    route,
    apiKey,
  });
  return used ? route.charge(used, Math.max(0, Number(job.max_cost_mc) - Number(job.cost_mc))) : 0;
}

/**
 * The key for this attempt's provider calls: the workspace's own key when it funds the job (read
 * and decrypted now, for this attempt only), else the operator's key from the providers file.
 */
async function providerKeyFor(deps: Deps, job: JobRow, route: OperationRoute, funding: 'credits' | 'provider_key'): Promise<string | undefined> {
  if (funding === 'credits') return route.provider?.apiKey?.reveal();
  const own = await readProviderKey(deps, job.workspace_id, route.providerName);
  if (own === undefined) throw new ProviderError('PROVIDER_AUTH', 'The workspace funds this job with its own provider key, which is no longer stored.');
  return own;
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
function isDeadline(reason: unknown): boolean {
  return reason instanceof DOMException && reason.name === 'TimeoutError';
}
