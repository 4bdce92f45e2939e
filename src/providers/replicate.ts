/**
 * The Replicate adapter (decisions.md section 5): any queued operation runs as one remote
 * prediction of the route's model, over the plain HTTP predictions API through the egress client.
 *
 * One attempt: build the model input from the route's template, create the prediction, checkpoint
 * its id at once, poll it until it ends, download and check the files it returns, and charge what
 * it reports (prediction time, images, seconds, characters) at the file's prices.
 *
 * Invariants:
 * - No double spend: the prediction id is checkpointed (with the attempt number) as soon as the
 *   provider accepts it; an attempt recovered after a crash (same attempt number) attaches to that
 *   prediction instead of creating one. A retry (a new attempt) creates a new prediction.
 * - A prediction this attempt leaves without an outcome (deadline, cancellation, lost lease, a
 *   failed poll) is cancelled at the provider, best effort.
 * - The key goes only into the Authorization header of calls to the provider's own origin: never
 *   into job state, results, errors or logs.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { MediaKind } from '../operations/contract.js';
import type { OperationId } from '../operations/ids.js';
import { callProvider, DEFAULT_RETRY_POLICY, jsonAnswer, type RetryPolicy } from './http.js';
import type { Quantities } from '../operations/pricing.js';
import { checkProviderFile, downloadProviderFile, MAX_PROVIDER_FILE_BYTES } from './provider-files.js';
import type { ProviderSpec } from './specs.js';
import type { AdapterContext } from './types.js';
import { ProviderError, WorkerShutdown, type ProducedFile, type Provider, type ProviderResult, type ProviderRun, type RemoteCancel } from './types.js';

/** Prediction statuses after which nothing changes any more. */
const TERMINAL = new Set(['succeeded', 'failed', 'canceled', 'aborted']);
/** Largest prediction answer read (outputs may be inlined as data URIs). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;
/** Deadline of the best-effort cancel call. */
const CANCEL_TIMEOUT_MS = 5_000;
const TEMPLATE = /^\{\{([A-Za-z][A-Za-z0-9]*)\}\}$/;

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
interface SavedPrediction {
  predictionId: string;
  attempt: number;
  /** When this attempt created it (epoch ms): the deadline counts from here, across recoveries. */
  createdAtMs: number;
}

/** Where each operation's files go in its result (the contract owns the shape). */
const FILE_FIELDS: Partial<Record<OperationId, { field: string; list?: boolean; base: string; optional?: boolean }>> = {
  'image.generate': { field: 'images', list: true, base: 'image' },
  'headshot.generate': { field: 'images', list: true, base: 'headshot' },
  'background.remove': { field: 'image', base: 'cutout' },
  'video.generate': { field: 'video', base: 'video' },
  'music.generate': { field: 'audio', base: 'music' },
  'speech.generate': { field: 'audio', base: 'speech' },
  'three-d.generate': { field: 'glb', base: 'model' },
  'three-d.rig': { field: 'glb', base: 'rigged' },
  'voice.clone': { field: 'sample', base: 'sample', optional: true },
};

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

export function replicateProvider(spec: ProviderSpec, ctx: AdapterContext): Provider {
  if (!spec.baseUrl) throw new Error(`providers file: replicate provider ${spec.name} has no baseUrl`);
  const baseUrl = spec.baseUrl;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetries: spec.maxRetries };

  return {
    name: 'replicate',
    steps: () => 1,
    async cancel(job: RemoteCancel): Promise<Quantities | undefined> {
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
    },
    async run(job: ProviderRun): Promise<ProviderResult> {
      const routeSpec = job.route.spec;
      const model = job.route.model ?? routeSpec?.model;
      if (!routeSpec || !model) throw new ProviderError('PROVIDER_ERROR', `No replicate model is configured for ${job.operation.id}.`);
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
            // A provider may echo what it was sent: its answers never carry the key onwards.
            throw err instanceof ProviderError ? new ProviderError(err.code, redact(err.message), err.consumedMillicents) : err;
          },
        );
      const getPrediction = (id: string) => call('GET', `/predictions/${encodeURIComponent(id)}`);
      /** Cancels at the provider, best effort, with a deadline of its own (job.signal may be aborted). */
      const cancel = async (id: string): Promise<Prediction | undefined> => {
        try {
          return await call('POST', `/predictions/${encodeURIComponent(id)}/cancel`, undefined, AbortSignal.timeout(CANCEL_TIMEOUT_MS), false);
        } catch (err) {
          ctx.log.warn({ jobId: job.jobId, predictionId: id, provider: spec.name, code: (err as { code?: unknown }).code }, 'replicate: cancelling the prediction failed');
          return undefined;
        }
      };

      // Attach to this attempt's prediction when a crashed run of the same attempt created one.
      let saved = readSaved(job.state);
      let prediction: Prediction | undefined;
      if (saved && saved.attempt === job.attempt) {
        try {
          prediction = await getPrediction(saved.predictionId);
        } catch (err) {
          // Unknown to the provider (or no longer readable): nothing to attach to.
          if (!(err instanceof ProviderError && err.code === 'PROVIDER_REJECTED')) throw abortReason(job, err);
        }
        // Cancelled by the run that was interrupted (shutdown, lost lease): its work is gone.
        if (prediction && (prediction.status === 'canceled' || prediction.status === 'aborted')) prediction = undefined;
        if (!prediction) saved = undefined;
      } else saved = undefined;

      if (!prediction || !saved) {
        const input = await modelInput(job, spec.mediaInputs);
        const versioned = /^([^/]+)\/([^:]+):([0-9a-f]{64})$/i.exec(model);
        const [owner, name] = model.split(':')[0]!.split('/') as [string, string];
        try {
          // Only a 429 is retried: a 5xx may come after the prediction was created (a second would be paid too).
          prediction = versioned
            ? await call('POST', '/predictions', { version: versioned[3], input }, job.signal, 'rate-limits')
            : await call('POST', `/models/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/predictions`, { input }, job.signal, 'rate-limits');
        } catch (err) {
          throw abortReason(job, err);
        }
        saved = { predictionId: prediction.id, attempt: job.attempt, createdAtMs: Date.now() };
        try {
          await job.checkpoint({ stepsDone: job.stepsDone, costMillicents: 0, state: { ...saved } });
        } catch (err) {
          // This attempt may change the job no more (cancelled, recovered): nobody will follow the prediction.
          await cancel(prediction.id);
          throw err;
        }
      }

      // Follow the prediction to its end, within the route's deadline.
      const predictionId = saved.predictionId;
      const deadline = saved.createdAtMs + routeSpec.timeoutSeconds * 1000;
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
            const final = await cancel(predictionId);
            throw new ProviderError(
              'PROVIDER_TIMEOUT',
              `The prediction did not finish within ${routeSpec.timeoutSeconds} s and was cancelled.`,
              job.charge({ predictSeconds: predictSecondsOf(final ?? prediction) }),
            );
          }
          await sleep(Math.min(routeSpec.pollIntervalMs, left), undefined, { signal: job.signal });
          prediction = await getPrediction(predictionId);
        }
      } catch (err) {
        // A stopping worker leaves the prediction running: the attempt recovered after it attaches to it.
        if (!cancelled && !(job.signal.reason instanceof WorkerShutdown)) await cancel(predictionId);
        throw abortReason(job, err);
      }

      const predictSeconds = predictSecondsOf(prediction);
      if (prediction.status !== 'succeeded') {
        const detail = typeof prediction.error === 'string' && prediction.error ? `: ${redact(prediction.error).slice(0, 300)}` : '';
        const what = prediction.status === 'failed' ? `The prediction failed${detail}` : `The prediction was ${prediction.status} at the provider${detail}`;
        throw new ProviderError('PROVIDER_ERROR', `${what}.`, consumedBy(job, prediction, predictSeconds));
      }

      // Files of the result, checked like uploads; consumed work is charged even when one is unusable.
      const files: ProducedFile[] = [];
      const data: Record<string, unknown> = { provider: job.route.providerName, model, predictionId };
      const produces = job.operation.produces;
      try {
        checkOutputSize(prediction.output);
        if (produces) files.push(...(await resultFiles(job, produces, prediction.output, (url) => fetchFile(ctx, baseUrl, url, headers, job, spec.requestTimeoutMs, policy))));
        else data.output = prediction.output ?? null;
      } catch (err) {
        if (job.signal.aborted) throw job.signal.reason;
        if (err instanceof ProviderError) throw new ProviderError(err.code, redact(err.message), job.charge(usedQuantities(job, predictSeconds, 0)));
        throw err;
      }
      if (job.operation.id === 'voice.clone') data.voice = { id: predictionId, name: String(job.input.name ?? 'voice') };
      const imageCount = files.filter((f) => f.field === 'images').length;
      const cost = job.charge(usedQuantities(job, predictSeconds, imageCount));
      // The one step, recorded with the result (its files are stored with it).
      await job.checkpoint({ stepsDone: job.stepsTotal, costMillicents: cost, state: { ...saved }, files });
      return { data, files: [], costMillicents: 0 };
    },
  };
}

/**
 * What an unsuccessful prediction consumed. An `aborted` one never started ("the prediction
 * exceeded its deadline before it could start running", Replicate's prediction lifecycle,
 * https://replicate.com/docs/topics/predictions/lifecycle): no work was done and nothing is
 * charged, unless the provider reports prediction time after all. A failed or canceled one is
 * charged its prediction time (and the route's per-run price: its work started).
 */
function consumedBy(job: ProviderRun, prediction: Prediction, predictSeconds: number): number {
  if (prediction.status === 'aborted' && !(predictSeconds > 0)) return 0;
  return job.charge({ predictSeconds });
}

/**
 * Largest text a prediction's output may hold (the strings of its JSON, file URLs included): the
 * bound of a public job result. A larger output fails the job before anything is downloaded.
 */
export const MAX_OUTPUT_TEXT_BYTES = 16 * 1024 * 1024;

function checkOutputSize(output: unknown): void {
  let total = 0;
  const visit = (v: unknown, depth: number): void => {
    if (total > MAX_OUTPUT_TEXT_BYTES || depth > 32) return;
    if (typeof v === 'string') total += Buffer.byteLength(v, 'utf8');
    else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (typeof v === 'object' && v !== null) for (const [k, x] of Object.entries(v)) {
      total += Buffer.byteLength(k, 'utf8');
      visit(x, depth + 1);
    }
  };
  visit(output, 0);
  if (total > MAX_OUTPUT_TEXT_BYTES) throw new ProviderError('PROVIDER_ERROR', `The prediction output exceeds ${MAX_OUTPUT_TEXT_BYTES / 1024 / 1024} MiB.`);
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

/**
 * What a prediction consumed: its seconds, the images it returned, and the seconds of media or
 * characters of text the input asked for (a prediction makes what it was asked for).
 */
function usedQuantities(job: ProviderRun, predictSeconds: number, images: number): Quantities {
  const asked = job.operation.quantities(job.input).maximum;
  const q: Quantities = { predictSeconds };
  if (asked.images !== undefined) q.images = images;
  if (asked.seconds !== undefined) q.seconds = asked.seconds;
  if (asked.characters !== undefined) q.characters = asked.characters;
  return q;
}

/**
 * The model input: the route's template with every "{{field}}" string replaced by that input
 * field (an absent field drops the key), other values as written; without a template the
 * operation's input. Media fields become signed URLs (or data URIs) of the media items.
 */
export async function modelInput(job: ProviderRun, mediaInputs: 'url' | 'dataUri'): Promise<Record<string, unknown>> {
  const media = new Map(job.operation.mediaFields.map((f) => [f.field, f]));
  const resolved = new Map<string, unknown>();
  const value = async (field: string): Promise<unknown> => {
    if (resolved.has(field)) return resolved.get(field);
    let v = job.input[field];
    if (v !== undefined && media.has(field)) {
      const one = async (id: unknown) => {
        if (typeof id !== 'string') throw new ProviderError('PROVIDER_REJECTED', `The input field ${field} does not name media items.`);
        if (mediaInputs === 'dataUri') {
          const { bytes, mimeType } = await job.media.read(id);
          return `data:${mimeType};base64,${bytes.toString('base64')}`;
        }
        return job.media.signedUrl(id);
      };
      v = Array.isArray(v) ? await Promise.all(v.map(one)) : await one(v);
    }
    resolved.set(field, v);
    return v;
  };
  const OMIT = Symbol('omit');
  const fill = async (t: unknown): Promise<unknown> => {
    if (typeof t === 'string') {
      const m = TEMPLATE.exec(t);
      if (!m) return t;
      const v = await value(m[1]!);
      return v === undefined ? OMIT : v;
    }
    if (Array.isArray(t)) return (await Promise.all(t.map(fill))).filter((v) => v !== OMIT);
    if (typeof t === 'object' && t !== null) {
      const out: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(t)) {
        const filled = await fill(v);
        if (filled !== OMIT) out[k] = filled;
      }
      return out;
    }
    return t;
  };
  const template = job.route.spec?.input;
  if (template) return (await fill(template)) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(job.input)) {
    const v = await value(k);
    if (v !== undefined) out[k] = v;
  }
  return out;
}

/** File addresses in an output: a URL string, a list of them, or an object holding them (in order). */
export function outputUrls(output: unknown): string[] {
  const urls: string[] = [];
  const visit = (v: unknown, depth: number) => {
    if (depth > 4 || urls.length >= 64) return;
    if (typeof v === 'string') {
      if (/^(https?:|data:)/i.test(v)) urls.push(v);
    } else if (Array.isArray(v)) for (const x of v) visit(x, depth + 1);
    else if (typeof v === 'object' && v !== null) for (const x of Object.values(v)) visit(x, depth + 1);
  };
  visit(output, 0);
  return urls;
}

async function resultFiles(job: ProviderRun, produces: MediaKind, output: unknown, download: (url: string) => Promise<Buffer>): Promise<ProducedFile[]> {
  const place = FILE_FIELDS[job.operation.id] ?? { field: produces, base: produces };
  let urls = outputUrls(output);
  if (urls.length === 0) {
    if (place.optional) return [];
    throw new ProviderError('PROVIDER_ERROR', 'The prediction succeeded without returning a file.');
  }
  // Never more files than the run was priced for: a model that ignores num_outputs and returns
  // more images than asked fails the job (nothing of it is stored; its prediction time is charged).
  const asked = Math.max(1, num(job.input.count, 1));
  if (place.list && urls.length > asked) throw new ProviderError('PROVIDER_ERROR', `The prediction returned ${urls.length} files where ${asked} were asked for.`);
  urls = place.list ? urls : urls.slice(0, 1);
  const files: ProducedFile[] = [];
  for (const [i, url] of urls.entries()) {
    const bytes = await download(url);
    files.push(place.list ? await checkProviderFile(bytes, produces, place.field, `${place.base}-${i + 1}`, i) : await checkProviderFile(bytes, produces, place.field, place.base));
  }
  return files;
}

async function fetchFile(
  ctx: AdapterContext,
  baseUrl: string,
  url: string,
  headers: Record<string, string>,
  job: ProviderRun,
  timeoutMs: number,
  policy: RetryPolicy,
): Promise<Buffer> {
  if (/^data:/i.test(url)) {
    const m = /^data:[^,]*?(;base64)?,(.*)$/is.exec(url);
    if (!m) throw new ProviderError('PROVIDER_ERROR', 'The provider returned a malformed data URI.');
    let bytes: Buffer;
    try {
      bytes = m[1] ? Buffer.from(m[2]!, 'base64') : Buffer.from(decodeURIComponent(m[2]!), 'utf8');
    } catch {
      throw new ProviderError('PROVIDER_ERROR', 'The provider returned a malformed data URI.');
    }
    if (bytes.length > MAX_PROVIDER_FILE_BYTES) throw new ProviderError('PROVIDER_ERROR', 'The provider answer exceeds the size bound.');
    return bytes;
  }
  const { authorization } = headers;
  return downloadProviderFile(ctx, baseUrl, url, { ...(authorization ? { headers: { authorization } } : {}), signal: job.signal, timeoutMs, policy });
}
