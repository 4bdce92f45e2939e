/**
 * The `sprites` local engine (sprite.generate): frames drawn one per checkpointed step, by the
 * provider the entry's `frames` names (sprite-draw-remote.ts) or locally (`"simulated"`,
 * sprite-draw-simulated.ts), then packed with sharp into an atlas (maxrects-packer: padding,
 * optional power-of-two size), horizontal strips, and the engine exports (sprite-exports.ts).
 *
 * Invariants:
 * - Each frame is a step: drawn, made into a PNG of the frame size and checkpointed with its file
 *   (field `frames`, its index) and its cost. A retry resumes after the frames already drawn,
 *   reads them back from the job's media and is not charged for them again.
 * - Cost: the sprites entry's prices per frame drawn: frame k costs perFrameMillicents, and the
 *   first frame of the job also carries perRunMillicents; what an attempt is charged never
 *   exceeds its maximum. The drawing provider's own prices play no part.
 * - The atlas and strips hold exactly the frames' pixels (sprite-render.ts), and every export
 *   names the atlas rectangles of the layout (sprite-pack.ts).
 */
import type { SpriteEngine } from '../../operations/sprite-generate.js';
import { SPRITE_ENGINES } from '../../operations/sprite-generate.js';
import { costOf } from '../../operations/pricing.js';
import type { LocalContext } from '../types.js';
import { ProviderError, type ProducedFile, type Provider, type ProviderResult, type ProviderRun } from '../types.js';
import { drawSimulatedFrame } from './sprite-draw-simulated.js';
import { DRAWING_SHARE, remoteFrames, type RemoteFrames } from './sprite-draw-remote.js';
import { ATLAS_FILE_NAME, buildExports, stripFileName } from './sprite-exports.js';
import { frameName, packAtlas, stripLayouts } from './sprite-pack.js';
import { readFrame, renderAtlas, renderStrip, toFrame, type Drawing, type Frame } from './sprite-render.js';

interface SpriteInput {
  prompt: string;
  frames: number;
  frameWidth: number;
  frameHeight: number;
  engines: SpriteEngine[];
  padding: number;
  powerOfTwo: boolean;
}

const whole = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : fallback);

/** The input with the contract's defaults. */
function readInput(input: Record<string, unknown>, steps: number): SpriteInput {
  const engines = Array.isArray(input.engines) ? SPRITE_ENGINES.filter((e) => (input.engines as unknown[]).includes(e)) : [...SPRITE_ENGINES];
  return {
    prompt: typeof input.prompt === 'string' ? input.prompt : '',
    frames: steps,
    frameWidth: whole(input.frameWidth, 64),
    frameHeight: whole(input.frameHeight, 64),
    engines,
    padding: whole(input.padding, 2),
    powerOfTwo: input.powerOfTwo === true,
  };
}

export function spritesEngine(ctx: LocalContext): Provider {
  const source = ctx.spec.frames ?? 'simulated';
  const remote: RemoteFrames | undefined = source === 'simulated' ? undefined : remoteFrames(source, ctx);

  async function draw(job: ProviderRun, p: SpriteInput, index: number): Promise<Drawing> {
    if (remote) return remote.draw(job, index, p.frames, index > 0 ? firstFrameOf(job) : undefined);
    return drawSimulatedFrame(p.prompt, index, p.frames, p.frameWidth, p.frameHeight);
  }

  return {
    name: 'local',
    // A cancelled frame was not drawn: nothing is reported as consumed (the sprite is priced per frame).
    ...(remote
      ? {
          async cancel(job) {
            await remote.cancel(job);
            return undefined;
          },
        }
      : {}),
    async run(job: ProviderRun): Promise<ProviderResult> {
      const p = readInput(job.input, job.stepsTotal);
      const frames = await earlierFrames(job, p);
      const stepCost = frameCosts(job);
      for (let index = job.stepsDone; index < p.frames; index++) {
        job.signal.throwIfAborted();
        const frame = await toFrame(await draw(job, p, index), p.frameWidth, p.frameHeight);
        frames[index] = frame;
        await job.checkpoint({
          stepsDone: index + 1,
          costMillicents: stepCost(index + 1),
          state: {},
          files: [{ field: 'frames', index, name: `${frameName(index)}.png`, mimeType: 'image/png', bytes: frame.png }],
        });
        await job.progress(((index + 1) / p.frames) * 100 * DRAWING_SHARE);
      }

      const layout = packAtlas(p.frames, p.frameWidth, p.frameHeight, p.padding, p.powerOfTwo);
      const strips = stripLayouts(p.frames, p.frameWidth, p.frameHeight);
      const files: ProducedFile[] = [{ field: 'atlas', name: ATLAS_FILE_NAME, mimeType: 'image/png', bytes: await renderAtlas(layout, frames) }];
      for (const strip of strips) {
        files.push({ field: 'strips', index: strip.index, name: stripFileName(strip), mimeType: 'image/png', bytes: await renderStrip(strip, frames, p.frameWidth, p.frameHeight) });
      }
      return {
        data: {
          provider: job.route.providerName,
          model: job.route.model,
          // How the frames were kept alike: drawn from the first frame, or each on its own.
          frameMode: remote?.takesReference && p.frames > 1 ? 'first-frame-reference' : 'independent',
          exports: buildExports(p.engines, layout, strips),
        },
        files,
        costMillicents: 0,
      };
    },
  };
}

/** The media id of the first frame (checkpointed by this attempt or an earlier one). */
function firstFrameOf(job: ProviderRun): string {
  const first = job.checkpointedFiles().find((file) => file.field === 'frames' && file.index === 0);
  if (!first) throw new ProviderError('PROVIDER_ERROR', 'The first frame, the reference of the others, is missing.');
  return first.mediaId;
}

/** The frames earlier attempts checkpointed, read back from the job's media. */
async function earlierFrames(job: ProviderRun, p: SpriteInput): Promise<Frame[]> {
  const frames: Frame[] = new Array(p.frames);
  for (const file of job.checkpointedFiles()) {
    if (file.field !== 'frames' || file.index === undefined || file.index >= job.stepsDone) continue;
    const { bytes } = await job.media.read(file.mediaId);
    const frame = await readFrame(bytes, p.frameWidth, p.frameHeight);
    if (!frame) throw new ProviderError('PROVIDER_ERROR', `Frame ${file.index + 1}, drawn by an earlier attempt, is no longer a ${p.frameWidth}×${p.frameHeight} PNG.`);
    frames[file.index] = frame;
  }
  for (let index = 0; index < job.stepsDone; index++) {
    if (!frames[index]) throw new ProviderError('PROVIDER_ERROR', `Frame ${index + 1}, drawn by an earlier attempt, is missing.`);
  }
  return frames;
}

/**
 * The cost of the step that completes frame `done` (1-based count): the entry's price of `done`
 * frames less that of `done - 1`, where no frame costs nothing, so perRunMillicents comes with
 * the job's first frame. Capped over the attempt at its maximum.
 */
function frameCosts(job: ProviderRun): (done: number) => number {
  const params = job.route.spec?.price;
  const total = job.stepsTotal;
  const full = job.route.price(job.input).maximumMillicents;
  const cumulative = (n: number) => (n === 0 ? 0 : params ? costOf(params, { frames: n }) : Math.ceil((full * n) / total));
  const start = cumulative(job.stepsDone);
  const attempt = (n: number) => Math.min(cumulative(n) - start, job.maximumMillicents);
  return (done) => attempt(done) - attempt(done - 1);
}
