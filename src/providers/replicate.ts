/**
 * The Replicate adapter (decisions.md section 5): any queued operation runs as one remote
 * prediction of the route's model, over the plain HTTP predictions API through the egress client.
 *
 * One attempt: build the model input from the route's template (replicate-input.ts), create the
 * prediction, checkpoint its id at once, poll it until it ends (replicate-prediction.ts), download
 * and check the files it returns (replicate-output.ts), and charge what it reports (prediction
 * time, images, seconds, characters) at the file's prices.
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
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './http.js';
import { fetchFile, outputFiles, usedQuantities } from './replicate-output.js';
import { cancelSavedPrediction, followPrediction, predictionCalls, predictSecondsOf, startPrediction, type Prediction } from './replicate-prediction.js';
import type { ProviderSpec } from './specs.js';
import type { AdapterContext } from './types.js';
import { ProviderError, type Provider, type ProviderResult, type ProviderRun } from './types.js';

export function replicateProvider(spec: ProviderSpec, ctx: AdapterContext): Provider {
  if (!spec.baseUrl) throw new Error(`providers file: replicate provider ${spec.name} has no baseUrl`);
  const baseUrl = spec.baseUrl;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, maxRetries: spec.maxRetries };

  return {
    name: 'replicate',
    steps: () => 1,
    // The model gets only what its input template names.
    takesReferenceImages: (entry) => entry.input !== undefined && JSON.stringify(entry.input).includes('{{referenceMediaIds}}'),
    // A speaker-audio model: its template sends the workspace voice's reference audio (replicate-input.ts).
    takesVoices: (entry) => entry?.input !== undefined && JSON.stringify(entry.input).includes('{{voiceId}}'),
    cancel: (job) => cancelSavedPrediction(ctx, spec, baseUrl, policy, job),
    async run(job: ProviderRun): Promise<ProviderResult> {
      const routeSpec = job.route.spec;
      const model = job.route.model ?? routeSpec?.model;
      if (!routeSpec || !model) throw new ProviderError('PROVIDER_ERROR', `No replicate model is configured for ${job.operation.id}.`);
      const calls = predictionCalls(ctx, spec, baseUrl, policy, job);
      const started = await startPrediction(job, calls, model, spec.mediaInputs);
      const { saved } = started;
      const predictionId = saved.predictionId;
      // Follow the prediction to its end, within the route's deadline.
      const prediction = await followPrediction(job, calls, saved, started.prediction, routeSpec);

      const predictSeconds = predictSecondsOf(prediction);
      if (prediction.status !== 'succeeded') {
        const detail = typeof prediction.error === 'string' && prediction.error ? `: ${calls.redact(prediction.error).slice(0, 300)}` : '';
        const what = prediction.status === 'failed' ? `The prediction failed${detail}` : `The prediction was ${prediction.status} at the provider${detail}`;
        throw new ProviderError('PROVIDER_ERROR', `${what}.`, consumedBy(job, prediction, predictSeconds));
      }

      // Files of the result, checked like uploads; consumed work is charged even when one is unusable.
      const data: Record<string, unknown> = { provider: job.route.providerName, model, predictionId };
      const download = (url: string) => fetchFile(ctx, baseUrl, url, calls.headers, job, spec.requestTimeoutMs, policy);
      const produced = await outputFiles(job, prediction.output, predictSeconds, calls.redact, download);
      if (!produced) data.output = prediction.output ?? null;
      const files = produced ?? [];
      // The prediction is the provider's id of the clone; the job's finish stores the workspace voice
      // and puts its id here (modules/voices/clone-finish.ts).
      if (job.operation.id === 'voice.clone') data.voice = { id: predictionId, name: String(job.input.name ?? 'voice') };
      if (job.voice) data.voiceId = job.voice.id;
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
