/**
 * Runs one attempt of a job this process holds the lease of (queued jobs claimed by a worker,
 * or synchronous runs). Steps are checkpointed with the lease token; finishing settles the
 * attempt in the same transaction as the status change. If the lease is lost (cancelled,
 * recovered after a pause), the attempt stops without changing anything. The parts of an
 * attempt (its adapter's context, its finish, its failure) are in attempt.ts.
 */
import { modeOfScope } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { findOperation } from '../../operations/registry.js';
import { ProviderError, type OperationRoute } from '../../providers/types.js';
import { readProviderKey } from '../provider-keys/service.js';
import { voiceForAttempt } from '../voices/service.js';
import { prepareClonedVoice } from '../voices/clone-finish.js';
import { finishJob, LeaseLostError, readCheckpoint, type Checkpoint, type FinishRequest } from './lifecycle.js';
import { MAX_RESULT_BYTES } from './output.js';
import { fullStorageOf } from '../../lib/storage-full.js';
import type { JobRow } from './store.js';
import { adapterRun, attemptFailed, finishAttempt, isDeadline, snapshotOf, storeFiles, type Attempt, type ExecuteOptions, type ExecutionOutcome } from './attempt.js';

export type { ExecuteOptions, ExecutionOutcome } from './attempt.js';

/** Stored results leave room for the signed file URLs added when the result is read (16 MiB bound). */
const MAX_STORED_RESULT_BYTES = MAX_RESULT_BYTES - 256 * 1024;

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
  const route = deps.providers.route(op.id, modeOfScope(job.workspace_id));
  if (route) {
    // Recorded with the attempt's checkpoint or finish (no write of its own), for operators.
    cp.provider = route.providerName;
    cp.model = route.model;
  }
  const a: Attempt = {
    deps,
    job,
    op,
    route,
    input: JSON.parse(job.input_json) as Record<string, unknown>,
    token,
    cp,
    signal,
    options,
    funding: job.funding === 'provider_key' ? 'provider_key' : 'credits',
    maximumMillicents: Math.max(0, Number(job.max_cost_mc) - Number(job.cost_mc)),
    lastFiles: [],
    recorded: snapshotOf(cp),
    startedAt: deps.clock.now(),
  };
  try {
    // The deployment stopped offering the operation after the job was admitted (providers file changed).
    if (!route) throw new ProviderError('OPERATION_UNAVAILABLE', 'The operation is not offered by this deployment any more.');
    return await completeAttempt(a, route);
  } catch (err) {
    return attemptFailed(a, err);
  }
}

/** Runs the adapter, stores its files and result, and completes the job (a voice.clone writes its voice in that finish). */
async function completeAttempt(a: Attempt, route: OperationRoute): Promise<ExecutionOutcome> {
  const { deps, job, cp } = a;
  const apiKey = await providerKeyFor(deps, job, route, a.funding);
  // The workspace voice the input names (read now: one deleted since admission fails the job).
  const voice = await voiceForAttempt(deps, job.workspace_id, a.op, a.input);
  const result = await providerCall(deps, route, a.signal, () => route.adapter.run(adapterRun(a, route, { apiKey, ...(voice ? { voice } : {}) })));
  const refs = await storeFiles(deps, job, result.files, a.lastFiles);
  const assembled = assemble(result.data, [...cp.files, ...refs]);
  if (Buffer.byteLength(JSON.stringify(assembled)) > MAX_STORED_RESULT_BYTES) {
    throw new ProviderError('OUTPUT_TOO_LARGE', 'The result exceeds the 16 MiB bound of a public job result.', result.costMillicents);
  }
  const cloned = await prepareClonedVoice(deps, job, a.input, route, assembled);
  const row = await finishAttempt(a, { status: 'completed', consumedMillicents: cp.attemptCost + result.costMillicents, output: cloned?.output ?? assembled, checkpoint: cp }, alsoBoth(a.options.alsoInFinish, cloned?.write));
  return row ? { status: 'completed', row } : { status: 'lost' };
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

