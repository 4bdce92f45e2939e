/**
 * What ffprobe says about a video file of the work directory: the first video stream's displayed
 * size (after its rotation), frame rate and duration, and whether it has sound. Inputs are probed
 * before anything is edited so an unreadable file fails the job with a clear code; outputs are
 * probed to learn what was made (the charge is per output second).
 *
 * Invariant: a probe that resolves describes a video ffprobe could open with the demuxer its
 * format pins (never guessed from the content) and only through the local file protocol.
 */
import type { ProgramInfo } from './engines.js';
import { ProgramFailure, runProgram } from './process.js';
import { ProviderError } from '../types.js';
import { remember } from '../../lib/lru.js';

export interface VideoProbe {
  /** Displayed size: coded size turned by the stream's rotation. */
  width: number;
  height: number;
  /** Frames per second as ffmpeg writes it (`30000/1001`), or undefined when unknown. */
  frameRate: string | undefined;
  /** Seconds, or undefined when neither the stream nor the container says. */
  durationSeconds: number | undefined;
  hasAudio: boolean;
  /** Frames of the video stream when the container counts them. */
  frames: number | undefined;
}

/** The demuxer an accepted container is read with (`-f`), so no content can pick another. */
export const DEMUXERS: Readonly<Record<string, string>> = {
  'video/mp4': 'mov',
  'video/webm': 'matroska',
  'image/gif': 'gif',
};

const PROBE_TIMEOUT_MS = 30_000;

interface RawStream {
  codec_type?: string;
  width?: number;
  height?: number;
  r_frame_rate?: string;
  duration?: string;
  nb_frames?: string;
  side_data_list?: { rotation?: number }[];
}

/** Runs ffprobe on `file` (relative to `dir`); undefined when it cannot read the file at all. */
export async function probeVideo(ffprobe: ProgramInfo, dir: string, file: string, mimeType: string, signal: AbortSignal): Promise<VideoProbe | { unreadable: string }> {
  const demuxer = DEMUXERS[mimeType];
  if (!demuxer) return { unreadable: `${mimeType} is not a container this engine reads` };
  let stdout: Buffer;
  try {
    ({ stdout } = await runProgram(
      {
        path: ffprobe.path,
        args: [
          '-v', 'error',
          '-protocol_whitelist', 'file',
          '-f', demuxer,
          '-show_entries', 'stream=codec_type,width,height,r_frame_rate,duration,nb_frames:stream_side_data=rotation:format=duration',
          '-of', 'json',
          file,
        ],
        timeoutMs: PROBE_TIMEOUT_MS,
        maxStdoutBytes: 4 * 1024 * 1024,
        signal,
      },
      dir,
    ));
  } catch (err) {
    if (err instanceof ProgramFailure && err.kind === 'exit') return { unreadable: firstLine(err.stderr) ?? 'ffprobe could not read it' };
    if (err instanceof ProgramFailure && err.kind === 'timeout') throw new ProviderError('MEDIA_UNREADABLE', 'Reading the video took too long.');
    throw err;
  }
  let parsed: { streams?: RawStream[]; format?: { duration?: string } };
  try {
    parsed = JSON.parse(stdout.toString('utf8')) as typeof parsed;
  } catch {
    return { unreadable: 'ffprobe answered something that is not JSON' };
  }
  const streams = parsed.streams ?? [];
  const video = streams.find((s) => s.codec_type === 'video');
  if (!video) return { unreadable: 'it has no video stream' };
  const rotation = Math.abs(video.side_data_list?.find((d) => typeof d.rotation === 'number')?.rotation ?? 0) % 180;
  const [w, h] = [video.width ?? 0, video.height ?? 0];
  return {
    width: rotation === 90 ? h : w,
    height: rotation === 90 ? w : h,
    frameRate: usableRate(video.r_frame_rate),
    durationSeconds: positive(video.duration) ?? positive(parsed.format?.duration),
    hasAudio: streams.some((s) => s.codec_type === 'audio'),
    frames: positive(video.nb_frames),
  };
}

/** A frame rate from 1 to 240 frames per second written as ffmpeg's rational, else undefined. */
function usableRate(rate: string | undefined): string | undefined {
  const m = /^(\d{1,9})\/(\d{1,9})$/.exec(rate ?? '');
  if (!m) return undefined;
  const fps = Number(m[1]) / Number(m[2]);
  return Number.isFinite(fps) && fps >= 1 && fps <= 240 ? rate : undefined;
}

function positive(v: string | undefined): number | undefined {
  const n = Number(v);
  return v !== undefined && Number.isFinite(n) && n > 0 ? n : undefined;
}

/** Stored inputs' probes kept per process (a few hundred bytes each). */
export const INPUT_PROBES_KEPT = 256;
const inputProbes = new Map<string, Readonly<VideoProbe>>();

/**
 * probeVideo for a stored media item's copy: a probe that resolves is kept by the item's content
 * (its sha256, the demuxer's type and the ffprobe program), which never changes, so editing the
 * same upload again (another trim of it, a retry) does not start ffprobe again: about 50 ms of
 * program start-up on a Debian ffmpeg. Kept per workspace: a workspace's edit is never faster
 * because another workspace edited the same bytes (no timing tells one tenant what another holds).
 * Unreadable files are not kept. The least recently used of INPUT_PROBES_KEPT go first.
 */
export async function probeStoredVideo(
  ffprobe: ProgramInfo,
  dir: string,
  file: string,
  item: { workspaceId: string; mimeType: string; sha256: string },
  signal: AbortSignal,
): Promise<Readonly<VideoProbe> | { unreadable: string }> {
  const key = `${ffprobe.path}\0${item.workspaceId}\0${item.mimeType}\0${item.sha256}`;
  const kept = inputProbes.get(key);
  if (kept) {
    remember(inputProbes, key, kept, INPUT_PROBES_KEPT);
    return kept;
  }
  const probe = await probeVideo(ffprobe, dir, file, item.mimeType, signal);
  if ('unreadable' in probe) return probe;
  remember(inputProbes, key, Object.freeze(probe), INPUT_PROBES_KEPT);
  return probe;
}

/** The first line of ffprobe's complaint, without the file name it starts with. */
function firstLine(stderr: string): string | undefined {
  const line = stderr.split('\n').find((l) => l.trim() !== '');
  return line?.replace(/^[^:]*clip-\d+\.\w+:\s*/, '').trim().slice(0, 200);
}
