/**
 * Turns a video.edit input into one ffmpeg command: a single filter graph that applies the edit
 * steps in order to the current picture and sound, then the encoder of the chosen container.
 * Pure: the probes of the inputs are given, nothing runs here.
 *
 * Invariants: every input is read with a pinned demuxer through the local file protocol only;
 * the output is cut at the route's longest output (`-t`); the picture size is known at every step
 * (a crop outside the frame is refused before ffmpeg runs); encoded 4:2:0 pictures have even sides;
 * metadata of the input (camera, location) is not copied to the result.
 */
import type { VideoContainer, VideoEdit } from '../../operations/video-edit.js';
import { ProviderError } from '../types.js';
import { DEMUXERS, type VideoProbe } from './video-probe.js';

/** A file of the work directory ffmpeg reads. */
export interface PlanInput {
  file: string;
  mimeType: string;
  probe: VideoProbe;
}

export interface VideoPlan {
  /** ffmpeg's arguments (the program path not included). */
  args: string[];
  container: VideoContainer;
  outputFile: string;
  /** Where `-progress` writes (relative to the work directory). */
  progressFile: string;
  width: number;
  height: number;
  hasAudio: boolean;
  /** The expected output length (for progress), never above the route's longest output. */
  expectedSeconds: number;
}

const CONTAINER_OF: Readonly<Record<string, VideoContainer>> = { 'video/mp4': 'mp4', 'video/webm': 'webm' };
const AUDIO_FORMAT = 'aresample=48000,aformat=sample_fmts=fltp:channel_layouts=stereo';
const GIF_MAX_FPS = 15;
const DEFAULT_RATE = '30';

const ENCODERS: Readonly<Record<VideoContainer, { video: string[]; audio: string[]; muxer: string[] }>> = {
  mp4: {
    video: ['-c:v', 'libx264', '-preset', 'veryfast', '-crf', '23', '-pix_fmt', 'yuv420p'],
    audio: ['-c:a', 'aac', '-b:a', '128k'],
    muxer: ['-movflags', '+faststart', '-f', 'mp4'],
  },
  webm: {
    video: ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-row-mt', '1', '-b:v', '0', '-crf', '35', '-pix_fmt', 'yuv420p'],
    audio: ['-c:a', 'libopus', '-b:a', '96k'],
    muxer: ['-f', 'webm'],
  },
  gif: { video: ['-c:v', 'gif'], audio: [], muxer: ['-loop', '0', '-f', 'gif'] },
};

/** Frames per second of ffmpeg's rational (`30000/1001`), or undefined. */
export function framesPerSecond(rate: string | undefined): number | undefined {
  const m = /^(\d+)\/(\d+)$/.exec(rate ?? '');
  return m ? Number(m[1]) / Number(m[2]) : undefined;
}

/** A number as filter options read it: plain decimals, never exponent notation (1e-7). */
function fixed(n: number): string {
  return n.toFixed(6);
}

/**
 * How long a source's picture lasts: its frame count over its rate where the container counts
 * frames (the sample table ffmpeg decodes by), else the duration it declares.
 */
function pictureSeconds(probe: VideoProbe): number | undefined {
  const fps = framesPerSecond(probe.frameRate);
  return probe.frames !== undefined && fps ? probe.frames / fps : probe.durationSeconds;
}

/** atempo filters whose product is `factor` (one atempo takes 0.5 to 100). */
function tempo(factor: number): string {
  const parts: string[] = [];
  let left = factor;
  while (left < 0.5) {
    parts.push('atempo=0.5');
    left /= 0.5;
  }
  parts.push(`atempo=${fixed(left)}`);
  return parts.join(',');
}

/**
 * The longest output the edits themselves allow (seconds), or Infinity when they do not bound it:
 * a trim bounds what follows it, a speed step scales the bound, a concatenated video lifts it.
 */
export function editBoundSeconds(edits: readonly VideoEdit[]): number {
  let bound = Infinity;
  for (const e of edits) {
    if (e.type === 'trim') bound = Math.max(0, Math.min(e.endSeconds, bound) - e.startSeconds);
    else if (e.type === 'speed') bound /= e.factor;
    else if (e.type === 'concat') bound = Infinity;
  }
  return bound;
}

/** The container a run writes: the format step's, else the input's own. */
export function outputContainer(edits: readonly VideoEdit[], inputMimeType: string): VideoContainer {
  const step = edits.find((e): e is Extract<VideoEdit, { type: 'format' }> => e.type === 'format');
  return step?.container ?? CONTAINER_OF[inputMimeType] ?? 'mp4';
}

/**
 * The filter graph of one edit as it is built: the labels of the current video and audio streams,
 * the frame size and the length so far. Each edit step adds its filters after the current ones.
 */
class FilterGraph {
  readonly parts: string[] = [];
  private n = 0;
  private clip = 0;
  v: string;
  a: string | undefined;
  width: number;
  height: number;
  seconds: number;
  /** One frame rate throughout (the main video's): joined and retimed parts are brought to it. */
  readonly rate: string;

  constructor(
    main: PlanInput,
    private readonly clips: readonly PlanInput[],
    hasAudio: boolean,
    private readonly maxOutputSeconds: number,
  ) {
    // An input of odd size loses its last row or column at once: every step keeps the sides even.
    [this.width, this.height] = [main.probe.width - (main.probe.width % 2), main.probe.height - (main.probe.height % 2)];
    const even = this.width !== main.probe.width || this.height !== main.probe.height ? `crop=${this.width}:${this.height}:0:0,` : '';
    this.v = this.label('v');
    this.parts.push(`[0:v:0]${even}setsar=1,format=yuv420p[${this.v}]`);
    this.a = hasAudio ? this.audioOf(main, 0) : undefined;
    this.seconds = main.probe.durationSeconds ?? Infinity;
    this.rate = main.probe.frameRate ?? DEFAULT_RATE;
  }

  private label(prefix: string): string {
    return `${prefix}${this.n++}`;
  }

  /**
   * Every source is brought to the same audio format when the result has sound (the concat filter
   * joins only identical streams); a source without sound gets silence.
   */
  private audioOf(input: PlanInput, index: number): string {
    const out = this.label('a');
    this.parts.push(input.probe.hasAudio ? `[${index}:a:0]${AUDIO_FORMAT}[${out}]` : `anullsrc=r=48000:cl=stereo,atrim=duration=${fixed(pictureSeconds(input.probe) ?? this.maxOutputSeconds)}[${out}]`);
    return out;
  }

  /** A filter on the video stream (and one on the audio stream, when there is sound). */
  step(videoFilter: string, audioFilter?: string): void {
    const nv = this.label('v');
    this.parts.push(`[${this.v}]${videoFilter}[${nv}]`);
    this.v = nv;
    if (this.a !== undefined && audioFilter !== undefined) {
      const na = this.label('a');
      this.parts.push(`[${this.a}]${audioFilter}[${na}]`);
      this.a = na;
    }
  }

  /** Edit `i`. Throws ProviderError EDIT_OUT_OF_FRAME for a crop that leaves the frame. */
  apply(e: VideoEdit, i: number): void {
    switch (e.type) {
      case 'trim':
        this.step(`trim=start=${fixed(e.startSeconds)}:end=${fixed(e.endSeconds)},setpts=PTS-STARTPTS`, `atrim=start=${fixed(e.startSeconds)}:end=${fixed(e.endSeconds)},asetpts=PTS-STARTPTS`);
        this.seconds = Math.max(0, Math.min(e.endSeconds, this.seconds) - e.startSeconds);
        break;
      case 'resize':
        this.step(resizeFilter(e.width, e.height, e.fit ?? 'contain'));
        [this.width, this.height] = [e.width, e.height];
        break;
      case 'crop':
        if (e.x + e.width > this.width || e.y + e.height > this.height) {
          throw new ProviderError('EDIT_OUT_OF_FRAME', `Edit ${i} (crop) asks for ${e.width}×${e.height} at ${e.x},${e.y}, outside the ${this.width}×${this.height} frame at that step.`);
        }
        this.step(`crop=${e.width}:${e.height}:${e.x}:${e.y}`);
        [this.width, this.height] = [e.width, e.height];
        break;
      case 'speed':
        // Back to the source's rate: frames are dropped (faster) or repeated (slower), never retimed by the muxer.
        this.step(`setpts=(PTS-STARTPTS)/${fixed(e.factor)},fps=${this.rate}`, tempo(e.factor));
        this.seconds /= e.factor;
        break;
      case 'concat':
        this.concat();
        break;
      case 'mute':
      case 'format':
        break;
    }
  }

  /** The next clip joined after the video so far, brought to its frame size, rate and sound. */
  private concat(): void {
    const input = this.clips[this.clip++]!;
    const index = this.clip;
    const cv = this.label('v');
    this.parts.push(`[${index}:v:0]${resizeFilter(this.width, this.height, 'contain')},fps=${this.rate},format=yuv420p[${cv}]`);
    const ca = this.a !== undefined ? this.audioOf(input, index) : undefined;
    const nv = this.label('v');
    const na = this.a !== undefined ? this.label('a') : undefined;
    this.parts.push(`[${this.v}]${this.a !== undefined ? `[${this.a}]` : ''}[${cv}]${ca !== undefined ? `[${ca}]` : ''}concat=n=2:v=1:a=${this.a !== undefined ? 1 : 0}[${nv}]${na !== undefined ? `[${na}]` : ''}`);
    [this.v, this.a] = [nv, na];
    this.seconds += input.probe.durationSeconds ?? Infinity;
  }
}

/**
 * Builds the command. `clips[i]` is the input of the i-th concat step, in list order.
 * Throws ProviderError EDIT_OUT_OF_FRAME for a crop that leaves the frame.
 */
export function planVideoEdit(edits: readonly VideoEdit[], main: PlanInput, clips: readonly PlanInput[], maxOutputSeconds: number): VideoPlan {
  const container = outputContainer(edits, main.mimeType);
  const hasAudio = container !== 'gif' && !edits.some((e) => e.type === 'mute') && (main.probe.hasAudio || clips.some((c) => c.probe.hasAudio));
  const g = new FilterGraph(main, clips, hasAudio, maxOutputSeconds);
  edits.forEach((e, i) => g.apply(e, i));
  if (container === 'gif') {
    const fps = Math.min(GIF_MAX_FPS, framesPerSecond(main.probe.frameRate) ?? GIF_MAX_FPS);
    // One palette per frame: a palette of the whole clip would hold every frame until the end.
    g.step(`fps=${fps},split[g0][g1];[g1]palettegen=stats_mode=single[pal];[g0][pal]paletteuse=new=1`);
  }
  const encoder = ENCODERS[container];
  const outputFile = `edited.${container}`;
  const progressFile = 'progress.txt';
  const inputs = [main, ...clips].flatMap((input) => ['-protocol_whitelist', 'file,pipe', '-f', DEMUXERS[input.mimeType]!, '-i', input.file]);
  const args = [
    '-hide_banner', '-nostdin', '-y', '-v', 'error', '-xerror', '-nostats', '-progress', progressFile,
    ...inputs,
    '-filter_complex', g.parts.join(';'),
    '-map', `[${g.v}]`,
    ...(g.a !== undefined ? ['-map', `[${g.a}]`] : []),
    ...encoder.video,
    ...(g.a !== undefined ? encoder.audio : []),
    '-map_metadata', '-1', '-map_chapters', '-1',
    '-t', String(maxOutputSeconds),
    ...encoder.muxer,
    outputFile,
  ];
  return { args, container, outputFile, progressFile, width: g.width, height: g.height, hasAudio: g.a !== undefined, expectedSeconds: Math.min(g.seconds, maxOutputSeconds) };
}

/** Scales into width×height: contain pads (letterbox), cover crops, fill stretches. */
function resizeFilter(width: number, height: number, fit: 'contain' | 'cover' | 'fill'): string {
  switch (fit) {
    case 'fill':
      return `scale=${width}:${height},setsar=1`;
    case 'cover':
      return `scale=${width}:${height}:force_original_aspect_ratio=increase,crop=${width}:${height},setsar=1`;
    case 'contain':
      return `scale=${width}:${height}:force_original_aspect_ratio=decrease:force_divisible_by=2,pad=${width}:${height}:(ow-iw)/2:(oh-ih)/2,setsar=1`;
  }
}
