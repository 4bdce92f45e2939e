/**
 * One run of the ffmpeg engine: the input videos are copied from the media store into a fresh
 * work directory, probed (an unreadable one fails the job before any editing; a stored item's
 * probe is kept by its content, video-probe.ts), edited by a single
 * ffmpeg command (video-plan.ts) under the route's deadline and an output size limit, and the
 * result is probed, checked like an upload and charged per output second. A `prompt` is first
 * turned into edit steps by the chat model (video-prompt.ts), after the inputs are probed (the
 * model is told their lengths and sizes); the checked plan is checkpointed with its cost (the
 * edit step still to do) and then runs like given `edits`. The result's `steps` are the steps that ran.
 *
 * Invariant: when a run settles, every program it started has exited and its work directory is
 * gone (runProgram and withWorkDir); a failed run charges nothing of ffmpeg's work (the work is
 * the service's own and produced nothing to keep), only the chat usage of a plan it asked for;
 * a plan that fails a check is never given to ffmpeg (EDIT_PLAN_INVALID); a cancelled job's ffmpeg
 * is killed through the attempt's signal or, when the attempt learns first that it lost the job
 * (progress refused), by that refusal.
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
import { inputIds, PROMPT_NEEDS_CHAT, type PromptPlanner } from './video-prompt.js';
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

export async function runVideoEdit(ctx: LocalContext, job: ProviderRun, planner?: PromptPlanner): Promise<ProviderResult> {
  const { ffmpeg, ffprobe } = ctx.engines;
  if (!ffmpeg || !ffprobe) throw new ProviderError('PROVIDER_ERROR', 'ffmpeg is not installed on this deployment.');
  const prompt = typeof job.input.prompt === 'string' ? job.input.prompt : undefined;
  const given = (job.input.edits ?? []) as VideoEdit[];
  // Admission enforces the engine's schema; a job admitted under another providers file may not.
  if (prompt === undefined && given.length === 0) throw new ProviderError('PROVIDER_REJECTED', 'The ffmpeg engine needs `edits` or a `prompt`.');
  if (prompt !== undefined && !planner) throw new ProviderError('PROVIDER_REJECTED', PROMPT_NEEDS_CHAT);
  const spec = job.route.spec ?? ctx.spec;
  const deadline = Date.now() + spec.timeoutSeconds * 1000;
  const remaining = () => Math.max(1, deadline - Date.now());

  return withWorkDir(async (dir) => {
    const videos = await readInputs(job, ffprobe, dir, inputIds(job.input));
    const mainId = String(job.input.mediaId);
    let edits = given;
    if (prompt !== undefined) {
      const saved = savedPlan(job);
      if (saved) edits = saved;
      else {
        const facts = [...videos.values()].map((v) => ({ mediaId: v.mediaId, durationSeconds: v.probe.durationSeconds, width: v.probe.width, height: v.probe.height, hasAudio: v.probe.hasAudio }));
        const { edits: planned, costMillicents: planCost } = await planner!.plan(job, facts, job.maximumMillicents);
        edits = planned;
        try {
          planFor(edits, videos, mainId, spec.maxOutputSeconds);
        } catch (err) {
          if (!(err instanceof ProviderError)) throw err;
          // A plan ffmpeg cannot run for these videos (a crop outside the frame …) is refused before it starts.
          throw new ProviderError('EDIT_PLAN_INVALID', `The chat model's plan was refused, nothing was run: ${err.message}`, planCost);
        }
        // The plan is kept (the edit step not done yet) and its cost committed: an attempt that
        // takes the job over, or a retry, runs it without asking (and paying) again.
        await job.checkpoint({ stepsDone: 0, costMillicents: planCost, state: { [PLAN_STATE]: { edits } } });
      }
    }
    const plan = planFor(edits, videos, mainId, spec.maxOutputSeconds);
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
        steps: edits,
      },
      files: [file],
      // The output's seconds, within the ffmpeg part of the maximum (the plan's part is its own).
      costMillicents: Math.min(job.charge({ seconds }), editMaximum(job, planner)),
    };
  });
}

/** Where a prompt's checked plan is kept in the job's state (checkpointed once it passed). */
const PLAN_STATE = 'plan';

function savedPlan(job: ProviderRun): VideoEdit[] | undefined {
  const saved = job.state[PLAN_STATE] as { edits?: unknown } | undefined;
  return saved && Array.isArray(saved.edits) && saved.edits.length > 0 ? (saved.edits as VideoEdit[]) : undefined;
}

/** The ffmpeg part of the route's maximum for the job's input: the whole, less a prompt's plan. */
function editMaximum(job: ProviderRun, planner: PromptPlanner | undefined): number {
  const whole = job.route.price(job.input).maximumMillicents;
  return typeof job.input.prompt === 'string' && planner ? whole - planner.price(job.input).maximumMillicents : whole;
}

/** The ffmpeg command of `edits`: the main video, then each concatenated one in the order of the steps. */
function planFor(edits: VideoEdit[], videos: Map<string, PlanInput & { mediaId: string }>, mainId: string, maxOutputSeconds: number): VideoPlan {
  const video = (id: string) => {
    const found = videos.get(id.toLowerCase());
    if (!found) throw new ProviderError('PROVIDER_REJECTED', `Video ${id} is not an input of the job.`);
    return found;
  };
  const main = video(mainId);
  const clips = edits.flatMap((e) => (e.type === 'concat' ? [video(e.mediaId)] : []));
  return planVideoEdit(edits, main, clips, outputLimitSeconds(edits, main, maxOutputSeconds));
}

/**
 * Copies each input video (the main one, then those the input's concat steps name, each once) into
 * the work directory and probes it; keyed by the id in lower case.
 */
async function readInputs(job: ProviderRun, ffprobe: ProgramInfo, dir: string, ids: string[]): Promise<Map<string, PlanInput & { mediaId: string }>> {
  const read = new Map<string, PlanInput & { mediaId: string }>();
  const load = async (mediaId: string, n: number): Promise<PlanInput & { mediaId: string }> => {
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
    return { file, mimeType, probe, mediaId };
  };
  // One at a time: each copy is a whole file in memory until it is written.
  for (const id of ids) {
    const key = id.toLowerCase();
    if (!read.has(key)) read.set(key, await load(id, read.size));
  }
  return read;
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
