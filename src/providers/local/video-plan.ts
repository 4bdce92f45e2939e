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
 * Builds the command. `clips[i]` is the input of the i-th concat step, in list order.
 * Throws ProviderError EDIT_OUT_OF_FRAME for a crop that leaves the frame.
 */
export function planVideoEdit(edits: readonly VideoEdit[], main: PlanInput, clips: readonly PlanInput[], maxOutputSeconds: number): VideoPlan {
  const container = outputContainer(edits, main.mimeType);
  const hasAudio = container !== 'gif' && !edits.some((e) => e.type === 'mute') && (main.probe.hasAudio || clips.some((c) => c.probe.hasAudio));
  const graph: string[] = [];
  let n = 0;
  const label = (prefix: string) => `${prefix}${n++}`;
  // Every source is brought to the same pixel shape and, when the result has sound, the same audio
  // format: the concat filter joins only identical streams. A source without sound gets silence.
  const audioOf = (input: PlanInput, index: number): string => {
    const out = label('a');
    graph.push(input.probe.hasAudio ? `[${index}:a:0]${AUDIO_FORMAT}[${out}]` : `anullsrc=r=48000:cl=stereo,atrim=duration=${fixed(pictureSeconds(input.probe) ?? maxOutputSeconds)}[${out}]`);
    return out;
  };
  // An input of odd size loses its last row or column at once: every step keeps the sides even.
  let [width, height] = [main.probe.width - (main.probe.width % 2), main.probe.height - (main.probe.height % 2)];
  const even = width !== main.probe.width || height !== main.probe.height ? `crop=${width}:${height}:0:0,` : '';
  let v = label('v');
  graph.push(`[0:v:0]${even}setsar=1,format=yuv420p[${v}]`);
  let a = hasAudio ? audioOf(main, 0) : undefined;
  let seconds = main.probe.durationSeconds ?? Infinity;
  // One frame rate throughout (the main video's): joined and retimed parts are brought to it.
  const rate = main.probe.frameRate ?? DEFAULT_RATE;
  const step = (videoFilter: string, audioFilter?: string) => {
    const nv = label('v');
    graph.push(`[${v}]${videoFilter}[${nv}]`);
    v = nv;
    if (a !== undefined && audioFilter !== undefined) {
      const na = label('a');
      graph.push(`[${a}]${audioFilter}[${na}]`);
      a = na;
    }
  };
  let clip = 0;
  edits.forEach((e, i) => {
    switch (e.type) {
      case 'trim':
        step(`trim=start=${fixed(e.startSeconds)}:end=${fixed(e.endSeconds)},setpts=PTS-STARTPTS`, `atrim=start=${fixed(e.startSeconds)}:end=${fixed(e.endSeconds)},asetpts=PTS-STARTPTS`);
        seconds = Math.max(0, Math.min(e.endSeconds, seconds) - e.startSeconds);
        break;
      case 'resize':
        step(resizeFilter(e.width, e.height, e.fit ?? 'contain'));
        [width, height] = [e.width, e.height];
        break;
      case 'crop':
        if (e.x + e.width > width || e.y + e.height > height) {
          throw new ProviderError('EDIT_OUT_OF_FRAME', `Edit ${i} (crop) asks for ${e.width}×${e.height} at ${e.x},${e.y}, outside the ${width}×${height} frame at that step.`);
        }
        step(`crop=${e.width}:${e.height}:${e.x}:${e.y}`);
        [width, height] = [e.width, e.height];
        break;
      case 'speed':
        // Back to the source's rate: frames are dropped (faster) or repeated (slower), never retimed by the muxer.
        step(`setpts=(PTS-STARTPTS)/${fixed(e.factor)},fps=${rate}`, tempo(e.factor));
        seconds /= e.factor;
        break;
      case 'concat': {
        const input = clips[clip++]!;
        const index = clip;
        const cv = label('v');
        graph.push(`[${index}:v:0]${resizeFilter(width, height, 'contain')},fps=${rate},format=yuv420p[${cv}]`);
        const ca = a !== undefined ? audioOf(input, index) : undefined;
        const nv = label('v');
        const na = a !== undefined ? label('a') : undefined;
        graph.push(`[${v}]${a !== undefined ? `[${a}]` : ''}[${cv}]${ca !== undefined ? `[${ca}]` : ''}concat=n=2:v=1:a=${a !== undefined ? 1 : 0}[${nv}]${na !== undefined ? `[${na}]` : ''}`);
        [v, a] = [nv, na];
        seconds += input.probe.durationSeconds ?? Infinity;
        break;
      }
      case 'mute':
      case 'format':
        break;
    }
  });
  if (container === 'gif') {
    const fps = Math.min(GIF_MAX_FPS, framesPerSecond(main.probe.frameRate) ?? GIF_MAX_FPS);
    // One palette per frame: a palette of the whole clip would hold every frame until the end.
    step(`fps=${fps},split[g0][g1];[g1]palettegen=stats_mode=single[pal];[g0][pal]paletteuse=new=1`);
  }
  const encoder = ENCODERS[container];
  const outputFile = `edited.${container}`;
  const progressFile = 'progress.txt';
  const inputs = [main, ...clips].flatMap((input) => ['-protocol_whitelist', 'file,pipe', '-f', DEMUXERS[input.mimeType]!, '-i', input.file]);
  const args = [
    '-hide_banner', '-nostdin', '-y', '-v', 'error', '-xerror', '-nostats', '-progress', progressFile,
    ...inputs,
    '-filter_complex', graph.join(';'),
    '-map', `[${v}]`,
    ...(a !== undefined ? ['-map', `[${a}]`] : []),
    ...encoder.video,
    ...(a !== undefined ? encoder.audio : []),
    '-map_metadata', '-1', '-map_chapters', '-1',
    '-t', String(maxOutputSeconds),
    ...encoder.muxer,
    outputFile,
  ];
  return { args, container, outputFile, progressFile, width, height, hasAudio: a !== undefined, expectedSeconds: Math.min(seconds, maxOutputSeconds) };
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
