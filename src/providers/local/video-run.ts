/**
 * One run of the ffmpeg engine: the input videos are copied from the media store into a fresh
 * work directory, probed (an unreadable one fails the job before any editing; a stored item's
 * probe is kept by its content, video-probe.ts), edited by a single
 * ffmpeg command (video-plan.ts) under the route's deadline and an output size limit, and the
 * result is probed, checked like an upload and charged per output second.
 *
 * Invariant: when a run settles, every program it started has exited and its work directory is
 * gone (runProgram and withWorkDir); a failed run charges nothing (the work is the service's own
 * and produced nothing to keep); a cancelled job's ffmpeg is killed through the attempt's signal
 * or, when the attempt learns first that it lost the job (progress refused), by that refusal.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { VideoEdit } from '../../operations/video-edit.js';
import { IMAGE_MAX_TOTAL_PIXELS } from '../../modules/media/limits.js';
import { checkProviderFile } from '../provider-files.js';
import type { LocalContext } from '../types.js';
import { ProviderError, type ProviderResult, type ProviderRun } from '../types.js';
import type { ProgramInfo } from './engines.js';
import { ProgramFailure, runProgram, withWorkDir } from './process.js';
import { framesPerSecond, planVideoEdit, type PlanInput, type VideoPlan } from './video-plan.js';
import { DEMUXERS, probeStoredVideo, probeVideo } from './video-probe.js';

/** Largest edited file kept: the bound of any file a provider hands back. */
export const MAX_OUTPUT_BYTES = 256 * 1024 * 1024;
/** Largest input frame: 8K (a longer side over 8192 or more pixels than 8192×4320). */
export const MAX_INPUT_SIDE = 8192;
export const MAX_INPUT_PIXELS = 8192 * 4320;
const PROGRESS_INTERVAL_MS = 1000;
const EXTENSIONS: Readonly<Record<string, string>> = { 'video/mp4': 'mp4', 'video/webm': 'webm' };
/** ffmpeg complaints that mean it could not decode an input (rather than failed itself). */
const DECODE_FAILURE = /invalid data|corrupt|error while decoding|invalid nal|error splitting|partial file|moov atom|truncat|ebml|end of file|could not find codec|decoding error/i;

export async function runVideoEdit(ctx: LocalContext, job: ProviderRun): Promise<ProviderResult> {
  const { ffmpeg, ffprobe } = ctx.engines;
  if (!ffmpeg || !ffprobe) throw new ProviderError('PROVIDER_ERROR', 'ffmpeg is not installed on this deployment.');
  const edits = (job.input.edits ?? []) as VideoEdit[];
  // Admission enforces the engine's schema; a job admitted under another providers file may not.
  if (edits.length === 0) throw new ProviderError('PROVIDER_REJECTED', 'The ffmpeg engine needs `edits`; it cannot follow a prompt.');
  const spec = job.route.spec ?? ctx.spec;
  const deadline = Date.now() + spec.timeoutSeconds * 1000;
  const remaining = () => Math.max(1, deadline - Date.now());

  return withWorkDir(async (dir) => {
    const [main, ...clips] = await readInputs(job, ffprobe, dir, edits);
    const plan = planVideoEdit(edits, main!, clips, outputLimitSeconds(edits, main!, spec.maxOutputSeconds));
    await edit(ffmpeg, plan, dir, job, remaining());
    const made = await probeVideo(ffprobe, dir, plan.outputFile, plan.container === 'gif' ? 'image/gif' : `video/${plan.container}`, job.signal);
    if ('unreadable' in made || made.durationSeconds === undefined || made.frames === 0) {
      throw new ProviderError('EMPTY_OUTPUT', 'The edits leave nothing of the video (a trim that starts after its end?).');
    }
    const bytes = await readFile(join(dir, plan.outputFile));
    const file = await checkProviderFile(bytes, plan.container === 'gif' ? 'image' : 'video', 'video', 'edited');
    const seconds = Math.round(made.durationSeconds * 1000) / 1000;
    return {
      data: {
        provider: job.route.providerName,
        model: job.route.model,
        durationSeconds: seconds,
        width: made.width,
        height: made.height,
        hasAudio: made.hasAudio,
      },
      files: [file],
      costMillicents: job.charge({ seconds }),
    };
  });
}

/**
 * Copies the main video and each concatenated one (in the order of the concat steps) into the
 * work directory and probes them; a video read twice is copied once.
 */
async function readInputs(job: ProviderRun, ffprobe: ProgramInfo, dir: string, edits: VideoEdit[]): Promise<PlanInput[]> {
  const ids = [String(job.input.mediaId), ...edits.flatMap((e) => (e.type === 'concat' ? [e.mediaId] : []))];
  const read = new Map<string, Promise<PlanInput>>();
  const load = async (mediaId: string, n: number): Promise<PlanInput> => {
    const { bytes, mimeType, sha256 } = await job.media.read(mediaId);
    const extension = EXTENSIONS[mimeType];
    if (!extension || !DEMUXERS[mimeType]) throw new ProviderError('MEDIA_UNREADABLE', `Input ${mediaId} is ${mimeType}, not an MP4 or WebM video.`);
    const file = `clip-${n}.${extension}`;
    await writeFile(join(dir, file), bytes);
    const probe = await probeStoredVideo(ffprobe, dir, file, { workspaceId: job.workspaceId, mimeType, sha256 }, job.signal);
    if ('unreadable' in probe) throw new ProviderError('MEDIA_UNREADABLE', `Input ${mediaId} cannot be read as a video: ${probe.unreadable}.`);
    if (probe.width <= 0 || probe.height <= 0) throw new ProviderError('MEDIA_UNREADABLE', `Input ${mediaId} has a frame of zero size.`);
    if (Math.max(probe.width, probe.height) > MAX_INPUT_SIDE || probe.width * probe.height > MAX_INPUT_PIXELS) {
      throw new ProviderError('MEDIA_TOO_LARGE', `Input ${mediaId} is ${probe.width}×${probe.height}; at most ${MAX_INPUT_SIDE} on a side and ${MAX_INPUT_PIXELS} pixels.`);
    }
    return { file, mimeType, probe };
  };
  const inputs: PlanInput[] = [];
  // One at a time: each copy is a whole file in memory until it is written.
  for (const id of ids) {
    const key = id.toLowerCase();
    if (!read.has(key)) read.set(key, load(id, read.size));
    inputs.push(await read.get(key)!);
  }
  return inputs;
}

/**
 * The longest output a run may write: the route's bound, and for a gif what keeps its frames
 * within the pixel bound every stored animation obeys (longer would be refused after the work).
 */
function outputLimitSeconds(edits: VideoEdit[], main: PlanInput, maxOutputSeconds: number): number {
  if (!edits.some((e) => e.type === 'format' && e.container === 'gif')) return maxOutputSeconds;
  // The frame at the end of the edits is not known before planning; the largest any step may set bounds it.
  let [width, height] = [main.probe.width, main.probe.height];
  for (const e of edits) if (e.type === 'resize' || e.type === 'crop') [width, height] = [e.width, e.height];
  const fps = Math.min(15, framesPerSecond(main.probe.frameRate) ?? 15);
  const limit = Math.floor(IMAGE_MAX_TOTAL_PIXELS / (width * height * fps));
  if (limit < 1) throw new ProviderError('OUTPUT_TOO_LARGE', `A ${width}×${height} gif cannot hold even one second; resize it first.`);
  return Math.min(maxOutputSeconds, limit);
}

/** Runs ffmpeg, reporting its progress; maps its failures onto the engine's error codes. */
async function edit(ffmpeg: ProgramInfo, plan: VideoPlan, dir: string, job: ProviderRun, timeoutMs: number): Promise<void> {
  const stop = new AbortController();
  const onAbort = () => stop.abort(job.signal.reason);
  job.signal.addEventListener('abort', onAbort, { once: true });
  if (job.signal.aborted) onAbort();
  const reporting = reportProgress(dir, plan, job, stop);
  try {
    const { stderr } = await runProgram({ path: ffmpeg.path, args: plan.args, timeoutMs, maxStdoutBytes: 1024 * 1024, watchFile: plan.outputFile, maxFileBytes: MAX_OUTPUT_BYTES, signal: stop.signal }, dir);
    // A demuxer that reaches the end of a truncated file says so but ffmpeg still exits 0 with
    // what it had: a part of the video, passed off as the whole, is not a result.
    if (DECODE_FAILURE.test(stderr)) throw new ProviderError('MEDIA_UNREADABLE', 'An input video is damaged: ffmpeg could not read all of it.');
  } catch (err) {
    if (!(err instanceof ProgramFailure)) throw err;
    if (err.kind === 'timeout') throw new ProviderError('PROVIDER_TIMEOUT', 'The operation did not finish in time.');
    if (err.kind === 'too-large') throw new ProviderError('OUTPUT_TOO_LARGE', `The edited video passed ${MAX_OUTPUT_BYTES / 1024 / 1024} MiB.`);
    if (err.kind === 'exit' && DECODE_FAILURE.test(err.stderr)) throw new ProviderError('MEDIA_UNREADABLE', 'An input video is damaged: ffmpeg could not decode it.');
    throw new ProviderError('PROVIDER_ERROR', `ffmpeg failed (${err.message}).`);
  } finally {
    job.signal.removeEventListener('abort', onAbort);
    await reporting.finish();
  }
}

/**
 * Reads ffmpeg's `-progress` file about once a second and reports the share of the expected
 * output written. A refused report (the job was cancelled or taken over) stops ffmpeg at once.
 */
function reportProgress(dir: string, plan: VideoPlan, job: ProviderRun, stop: AbortController): { finish(): Promise<void> } {
  let reported = 0;
  let done = false;
  let pending: Promise<void> = Promise.resolve();
  const tick = async () => {
    const text = await readFile(join(dir, plan.progressFile), 'utf8').catch(() => '');
    const written = /out_time_us=(\d+)\s*(?![\s\S]*out_time_us=)/.exec(text);
    if (!written || !Number.isFinite(plan.expectedSeconds) || plan.expectedSeconds <= 0) return;
    const percentage = Math.min(99, Math.floor((Number(written[1]) / 1e6 / plan.expectedSeconds) * 100));
    if (percentage <= reported) return;
    reported = percentage;
    await job.progress(percentage);
  };
  const timer = setInterval(() => {
    if (done) return;
    pending = pending.then(tick).catch((err: unknown) => {
      if (!stop.signal.aborted) stop.abort(err);
    });
  }, PROGRESS_INTERVAL_MS);
  return {
    async finish() {
      done = true;
      clearInterval(timer);
      await pending;
      // A refusal that came while ffmpeg was finishing still means this attempt lost the job.
      if (stop.signal.aborted && !job.signal.aborted) throw stop.signal.reason;
    },
  };
}
