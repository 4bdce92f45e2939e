/**
 * A Replicate prediction's lifecycle within one attempt: the predictions API as the attempt calls
 * it, creating the prediction (or attaching to the one a crashed run of the same attempt created),
 * following it to its end within the route's deadline, and cancelling it at the provider.
 *
 * - No double spend: the prediction id is checkpointed (with the attempt number) as soon as the
 *   provider accepts it, and only a 429 is retried when creating one.
 * - A prediction this attempt leaves without an outcome (deadline, cancellation, lost lease, a
 *   failed poll) is cancelled at the provider, best effort; a stopping worker leaves it running.
 * - The key goes only into the Authorization header, and an error's text is redacted of it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Quantities } from '../operations/pricing.js';
import { callProvider, jsonAnswer, type RetryPolicy } from './http.js';
import { modelInput } from './replicate-input.js';
import type { OperationRouteSpec, ProviderSpec } from './specs.js';
import type { AdapterContext } from './types.js';
import { ProviderError, WorkerShutdown, type ProviderRun, type RemoteCancel } from './types.js';

/** Prediction statuses after which nothing changes any more. */
const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'aborted']);
/** Largest prediction answer read (outputs may be inlined as data URIs). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Deadline of the best-effort cancel call. */
const CANCEL_TIMEOUT_MS = 5_000;

export interface Prediction {
  id: string;
  status: string;
  output?: unknown;
  error?: unknown;
  logs?: unknown;
  metrics?: { predict_time?: unknown } | null;
  started_at?: unknown;
  completed_at?: unknown;
}

/** What a job keeps between attempts (checkpoint state): the prediction of this attempt. */
export interface SavedPrediction {
  predictionId: string;
  attempt: number;
  /** When this attempt created it (epoch ms): the deadline counts from here, across recoveries. */
  createdAtMs: number;
}

/** The predictions API as one attempt calls it. */
export interface PredictionCalls {
  /** The request headers: the key, if any, in Authorization. */
  headers: Record<string, string>;
  /** A provider may echo what it was sent: text from it never carries the key onwards. */
  redact(text: string): string;
  get(id: string): Promise<Prediction>;
  create(model: string, input: Record<string, unknown>): Promise<Prediction>;
  /** Cancels at the provider, best effort, with a deadline of its own (job.signal may be aborted). */
  cancel(id: string): Promise<Prediction | undefined>;
}

export function predictionCalls(ctx: AdapterContext, spec: ProviderSpec, baseUrl: string, policy: RetryPolicy, job: ProviderRun): PredictionCalls {
  const headers: Record<string, string> = { accept: 'application/json', ...(job.apiKey ? { authorization: `Bearer ${job.apiKey}` } : {}) };
  const redact = (text: string) => (job.apiKey && job.apiKey.length >= 4 ? text.split(job.apiKey).join('[redacted]') : text);
  const call = (method: 'GET' | 'POST', path: string, body?: unknown, signal: AbortSignal = job.signal, retry: boolean | 'rate-limits' = true) =>
    callProvider(
      ctx.providerEgress,
      `${baseUrl}${path}`,
      {
        method,
        headers: body !== undefined ? { ...headers, 'content-type': 'application/json' } : headers,
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal,
        timeoutMs: signal === job.signal ? spec.requestTimeoutMs : CANCEL_TIMEOUT_MS,
        maxBytes: MAX_ANSWER_BYTES,
        retry,
      },
      policy,
    ).then(
      (res) => parsePrediction(jsonAnswer<unknown>(res)),
      (err: unknown) => {
        throw err instanceof ProviderError ? new ProviderError(err.code, redact(err.message), err.consumedMillicents) : err;
      },
    );
  return {
    headers,
    redact,
    get: (id) => call('GET', `/predictions/${encodeURIComponent(id)}`),
    create: (model, input) => {
      const versioned = /^([^/]+)\/([^:]+):([0-9a-f]{64})$/i.exec(model);
      const [owner, name] = model.split(':')[0]!.split('/') as [string, string];
      // Only a 429 is retried: a 5xx may come after the prediction was created (a second would be paid too).
      return versioned
        ? call('POST', '/predictions', { version: versioned[3], input }, job.signal, 'rate-limits')
        : call('POST', `/models/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/predictions`, { input }, job.signal, 'rate-limits');
    },
    cancel: async (id) => {
      try {
        return await call('POST', `/predictions/${encodeURIComponent(id)}/cancel`, undefined, AbortSignal.timeout(CANCEL_TIMEOUT_MS), false);
      } catch (err) {
        ctx.log.warn({ jobId: job.jobId, predictionId: id, provider: spec.name, code: (err as { code?: unknown }).code }, 'replicate: cancelling the prediction failed');
        return undefined;
      }
    },
  };
}

/**
 * This attempt's prediction: the one a crashed run of the same attempt created (unless it was
 * cancelled), else a new one, checkpointed at once. A retry (a new attempt) creates a new one.
 */
export async function startPrediction(job: ProviderRun, calls: PredictionCalls, model: string, mediaInputs: 'url' | 'dataUri'): Promise<{ prediction: Prediction; saved: SavedPrediction }> {
  let saved = readSaved(job.state);
  let prediction: Prediction | undefined;
  if (saved && saved.attempt === job.attempt) {
    try {
      prediction = await calls.get(saved.predictionId);
    } catch (err) {
      // Unknown to the provider (or no longer readable): nothing to attach to.
      if (!(err instanceof ProviderError && err.code === 'PROVIDER_REJECTED')) throw abortReason(job, err);
    }
    // Cancelled by the run that was interrupted (shutdown, lost lease): its work is gone.
    if (prediction && (prediction.status === 'canceled' || prediction.status === 'aborted')) prediction = undefined;
    if (!prediction) saved = undefined;
  } else saved = undefined;
  if (prediction && saved) return { prediction, saved };

  const input = await modelInput(job, mediaInputs);
  try {
    prediction = await calls.create(model, input);
  } catch (err) {
    throw abortReason(job, err);
  }
  saved = { predictionId: prediction.id, attempt: job.attempt, createdAtMs: Date.now() };
  try {
    await job.checkpoint({ stepsDone: job.stepsDone, costMillicents: 0, state: { ...saved } });
  } catch (err) {
    // This attempt may change the job no more (cancelled, recovered): nobody will follow the prediction.
    await calls.cancel(prediction.id);
    throw err;
  }
  return { prediction, saved };
}

/** Polls the prediction to its end, within the route's deadline (counted from its creation); reports the progress its logs print. */
export async function followPrediction(
  job: ProviderRun,
  calls: PredictionCalls,
  saved: SavedPrediction,
  first: Prediction,
  routeSpec: Pick<OperationRouteSpec, 'timeoutSeconds' | 'pollIntervalMs'>,
): Promise<Prediction> {
  const predictionId = saved.predictionId;
  const deadline = saved.createdAtMs + routeSpec.timeoutSeconds * 1000;
  let prediction = first;
  let reported = -1;
  let cancelled = false;
  try {
    while (!TERMINAL.has(prediction.status)) {
      const pct = logPercentage(prediction.logs);
      if (pct !== undefined && pct > reported) {
        reported = pct;
        await job.progress(Math.min(99, pct));
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        cancelled = true;
        const final = await calls.cancel(predictionId);
        throw new ProviderError(
          'PROVIDER_TIMEOUT',
          `The prediction did not finish within ${routeSpec.timeoutSeconds} s and was cancelled.`,
          job.charge({ predictSeconds: predictSecondsOf(final ?? prediction) }),
        );
      }
      await sleep(Math.min(routeSpec.pollIntervalMs, left), undefined, { signal: job.signal });
      prediction = await calls.get(predictionId);
    }
  } catch (err) {
    // A stopping worker leaves the prediction running: the attempt recovered after it attaches to it.
    if (!cancelled && !(job.signal.reason instanceof WorkerShutdown)) await calls.cancel(predictionId);
    throw abortReason(job, err);
  }
  return prediction;
}

/** A cancelled job's prediction, cancelled at the provider: the prediction time it reports, or undefined when it has none or the call fails. */
export async function cancelSavedPrediction(ctx: AdapterContext, spec: ProviderSpec, baseUrl: string, policy: RetryPolicy, job: RemoteCancel): Promise<Quantities | undefined> {
  const saved = readSaved(job.state);
  if (!saved || saved.attempt !== job.attempt) return undefined;
  try {
    const res = await callProvider(
      ctx.providerEgress,
      `${baseUrl}/predictions/${encodeURIComponent(saved.predictionId)}/cancel`,
      { method: 'POST', headers: { accept: 'application/json', ...(job.apiKey ? { authorization: `Bearer ${job.apiKey}` } : {}) }, timeoutMs: CANCEL_TIMEOUT_MS, maxBytes: MAX_ANSWER_BYTES, retry: false },
      policy,
    );
    // Consumed is the prediction time it reports; nothing it was producing is delivered.
    return { predictSeconds: predictSecondsOf(parsePrediction(jsonAnswer<unknown>(res))) };
  } catch (err) {
    ctx.log.warn({ jobId: job.jobId, predictionId: saved.predictionId, provider: spec.name, code: (err as { code?: unknown }).code }, 'replicate: cancelling the prediction of a cancelled job failed');
    return undefined;
  }
}

/** The caller's abort wins over whatever the interrupted call threw. */
function abortReason(job: ProviderRun, err: unknown): unknown {
  return job.signal.aborted ? (job.signal.reason ?? err) : err;
}

function readSaved(state: Record<string, unknown>): SavedPrediction | undefined {
  const { predictionId, attempt, createdAtMs } = state;
  if (typeof predictionId !== 'string' || predictionId === '' || typeof attempt !== 'number') return undefined;
  return { predictionId, attempt, createdAtMs: typeof createdAtMs === 'number' && Number.isFinite(createdAtMs) ? createdAtMs : Date.now() };
}

/** A prediction answer, or PROVIDER_ERROR when it is not one. */
export function parsePrediction(json: unknown): Prediction {
  const p = json as Partial<Prediction> | null;
  if (typeof p !== 'object' || p === null || typeof p.id !== 'string' || p.id === '' || p.id.length > 200 || typeof p.status !== 'string') {
    throw new ProviderError('PROVIDER_ERROR', 'The provider answer is not a prediction.');
  }
  return p as Prediction;
}

/** Prediction time the provider reports: metrics.predict_time, else the span between its timestamps. */
export function predictSecondsOf(p: Prediction): number {
  const reported = p.metrics?.predict_time;
  if (typeof reported === 'number' && Number.isFinite(reported) && reported >= 0) return reported;
  const started = typeof p.started_at === 'string' ? Date.parse(p.started_at) : NaN;
  if (Number.isNaN(started)) return 0;
  const ended = typeof p.completed_at === 'string' ? Date.parse(p.completed_at) : Date.now();
  return Number.isNaN(ended) ? 0 : Math.max(0, (ended - started) / 1000);
}

/** The last percentage a progress bar printed into the logs (tqdm style), if any. */
function logPercentage(logs: unknown): number | undefined {
  if (typeof logs !== 'string') return undefined;
  const tail = logs.slice(-4096);
  let last: number | undefined;
  for (const m of tail.matchAll(/(\d{1,3})%\|/g)) {
    const v = Number(m[1]);
    if (v <= 100) last = v;
  }
  return last;
}
