/**
 * Frames drawn by a provider of the file (`"frames": NAME`, an openai or replicate provider): each
 * frame is one image.generate request to that provider's adapter ("PROMPT — frame i of n", one
 * image, a size the provider accepts), run inside the sprite job's attempt. Where the provider
 * takes reference images (its route's image.generate schema has `referenceMediaIds` and, for a
 * model input template, the template uses it), every frame after the first is drawn from the first
 * frame as its reference, so the character stays the same; otherwise each frame is drawn alone.
 *
 * The adapter gets a run of its own: the image.generate route of the provider with the sprites
 * entry's `model` and `input` template, the provider's operator key (a local route has no personal
 * keys), the sprite job's signal. What it charges is ignored: the sprite job is charged per frame
 * at the sprites entry's prices. What it checkpoints is kept: its files are the drawing, and its
 * state (a remote prediction's id) is saved in the sprite job's state under DRAWING_STATE with
 * the frame it belongs to, so an attempt recovered after a crash attaches to that prediction
 * instead of paying for a second one, and a user's cancel stops it.
 */
import { imageGenerate } from '../../operations/image-generate.js';
import { nearestSize, type ImageSize } from '../openai-models.js';
import type { ProviderSpec } from '../specs.js';
import type { LocalContext, OperationRoute } from '../types.js';
import { ProviderError, type ProducedFile, type Provider, type ProviderRun, type RemoteCancel } from '../types.js';
import type { Drawing } from './sprite-render.js';

export const DRAWING_STATE = 'drawing';

/** A frame's drawing in progress: the adapter's own state, for the frame it belongs to. */
interface SavedDrawing {
  frame: number;
  state: Record<string, unknown>;
}

export interface RemoteFrames {
  /** Frames after the first are drawn from the first one (the provider takes reference images). */
  readonly takesReference: boolean;
  /**
   * Draws frame `index` (0-based) of `count`; the frames before it are done. `reference`: the media
   * id of the first frame, for the frames after it when `takesReference`.
   */
  draw(job: ProviderRun, index: number, count: number, reference?: string): Promise<Drawing>;
  /** Stops the remote work of the frame being drawn (a user's cancel); nothing is charged for it. */
  cancel(job: RemoteCancel): Promise<void>;
}

export function remoteFrames(name: string, ctx: LocalContext): RemoteFrames {
  const adapter = ctx.adapters.get(name);
  const provider = ctx.providers.get(name);
  if (!adapter || !provider) throw new Error(`providers file: the sprites engine draws frames on ${name}, which has no adapter`);
  const route = drawingRoute(name, adapter, provider, ctx);
  const apiKey = () => provider.apiKey?.reveal();
  const sizes = adapter.imageSizes?.(route.spec!);
  const takesReference = takesReferences(adapter, route);

  return {
    takesReference,
    async draw(job, index, count, reference) {
      const saved = savedDrawing(job.state);
      const files: ProducedFile[] = [];
      let result;
      try {
        result = await adapter.run({
          jobId: job.jobId,
          workspaceId: job.workspaceId,
          operation: imageGenerate,
          input: frameInput(job.input, index, count, sizes, takesReference ? reference : undefined),
          attempt: job.attempt,
          stepsTotal: 1,
          stepsDone: 0,
          state: saved?.frame === index ? saved.state : {},
          checkpointedFiles: () => [],
          maximumMillicents: 0,
          signal: job.signal,
          route,
          funding: 'credits',
          apiKey: apiKey(),
          media: job.media,
          isVerifiedHost: job.isVerifiedHost,
          charge: () => 0,
          progress: (percentage) => job.progress(((index + Math.min(99, percentage) / 100) / count) * 100 * DRAWING_SHARE),
          async checkpoint(step) {
            files.push(...(step.files ?? []));
            // The frame is not done yet: only the adapter's state is saved, with the frames done.
            if (step.state && step.stepsDone < 1) {
              await job.checkpoint({ stepsDone: index, costMillicents: 0, state: { [DRAWING_STATE]: { frame: index, state: step.state } } });
            }
          },
        });
      } catch (err) {
        if (job.signal.aborted || !(err instanceof ProviderError)) throw err;
        // Charged per frame drawn: a frame that failed costs nothing.
        throw new ProviderError(err.code, `Frame ${index + 1} of ${count}: ${err.message}`);
      }
      const image = [...files, ...result.files].find((f) => f.field === 'images');
      if (!image) throw new ProviderError('PROVIDER_ERROR', `Frame ${index + 1} of ${count}: the provider returned no image.`);
      return { bytes: image.bytes };
    },
    async cancel(job) {
      const saved = savedDrawing(job.state);
      if (!saved || !adapter.cancel) return;
      const count = typeof job.input.frames === 'number' ? job.input.frames : 8;
      try {
        await adapter.cancel({ ...job, operation: imageGenerate, input: frameInput(job.input, saved.frame, count, sizes), state: saved.state, route, apiKey: apiKey() });
      } catch (err) {
        // Best effort, like the adapters' own cancels: the job is cancelled whatever the provider says.
        ctx.log.warn({ jobId: job.jobId, provider: name, err }, 'sprites: cancelling the drawing of a frame failed');
      }
    },
  };
}

/** Share of the progress bar the drawing takes (packing takes the rest). */
export const DRAWING_SHARE = 0.95;

function savedDrawing(state: Record<string, unknown>): SavedDrawing | undefined {
  const saved = state[DRAWING_STATE] as Partial<SavedDrawing> | undefined;
  if (typeof saved !== 'object' || saved === null || typeof saved.frame !== 'number' || typeof saved.state !== 'object' || saved.state === null) return undefined;
  return { frame: saved.frame, state: saved.state };
}

/** The image.generate input of one frame (drawn from `reference`, a media id, when given). */
function frameInput(input: Record<string, unknown>, index: number, count: number, sizes: readonly ImageSize[] | undefined, reference?: string): Record<string, unknown> {
  const width = typeof input.frameWidth === 'number' ? input.frameWidth : 64;
  const height = typeof input.frameHeight === 'number' ? input.frameHeight : 64;
  const size = drawingSize(sizes, width, height);
  return { prompt: `${String(input.prompt ?? '')} — frame ${index + 1} of ${count}`, ...size, count: 1, ...(reference ? { referenceMediaIds: [reference] } : {}) };
}

/**
 * The provider draws image.generate from reference images: its route's input schema takes
 * `referenceMediaIds`, and the adapter uses them for this route (a Replicate model only when its
 * input template names them; a model without would be sent a field it ignores).
 */
function takesReferences(adapter: Provider, route: OperationRoute): boolean {
  const schema = (adapter.inputSchema?.(imageGenerate, route.spec) ?? imageGenerate.inputSchema) as { properties?: Record<string, unknown> };
  if (!Object.hasOwn(schema.properties ?? {}, 'referenceMediaIds')) return false;
  return adapter.takesReferenceImages?.(route.spec!) ?? true;
}

/**
 * The size asked of the provider for a frame of width × height: a model that takes fixed sizes
 * (`sizes`: OpenAI's image models, openai-models.ts) gets the accepted size nearest in shape that
 * covers the frame; other models (an OpenAI-compatible server, a Replicate model) get the frame's
 * shape scaled up to image.generate's range, in multiples of 64. The drawing is then scaled down
 * to the frame.
 */
export function drawingSize(sizes: readonly ImageSize[] | undefined, width: number, height: number): { width: number; height: number } {
  if (sizes && sizes.length > 0) return nearestSize(sizes, { width, height });
  const scale = Math.max(1, 256 / Math.min(width, height));
  const round = (v: number) => Math.min(2048, Math.max(256, Math.round((v * scale) / 64) * 64));
  return { width: round(width), height: round(height) };
}

/** The image.generate route of the drawing provider, with the sprites entry's model and template. */
function drawingRoute(name: string, adapter: Provider, provider: ProviderSpec, ctx: LocalContext): OperationRoute {
  const { spec } = ctx;
  return {
    operation: imageGenerate,
    providerName: name,
    providerType: provider.type,
    personalKeys: false,
    model: spec.model ?? null,
    adapter,
    spec: {
      operationId: 'image.generate',
      provider: name,
      ...(spec.model !== undefined ? { model: spec.model } : {}),
      ...(spec.input !== undefined ? { input: spec.input } : {}),
      timeoutSeconds: spec.timeoutSeconds,
      pollIntervalMs: spec.pollIntervalMs,
      maxOutputSeconds: spec.maxOutputSeconds,
    },
    provider,
    // The sprite job is charged per frame at the sprites entry's prices, not at the drawing provider's.
    price: () => ({ estimatedMillicents: 0, maximumMillicents: 0 }),
    charge: () => 0,
    steps: () => 1,
    inputSchema: imageGenerate.inputSchema,
  };
}
