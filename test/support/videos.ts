/**
 * Real test videos made by ffmpeg from its lavfi sources (testsrc picture, sine tone), small and
 * short so the engine tests stay fast, plus damaged variants built byte by byte from them: cut,
 * with a truncated or scrambled mdat that still passes the upload's structure checks, lying about
 * their duration, or turned by a rotation matrix. `probeMedia` reads any result back with ffprobe.
 * Programs run through the engine's own runProgram (argument arrays, work directory removed).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProgram, withWorkDir } from '../../src/providers/local/process.js';
import { installedEngines } from './engines.js';

export interface VideoSpec {
  seconds: number;
  width: number;
  height: number;
  fps?: number;
  audio?: boolean;
  container?: 'mp4' | 'webm';
  /** Sine frequency of the tone (tells two clips apart). */
  tone?: number;
}

const made = new Map<string, Promise<Buffer>>();

async function program(name: 'ffmpeg' | 'ffprobe'): Promise<string> {
  const info = (await installedEngines())[name];
  if (!info) throw new Error(`${name} is not installed`);
  return info.path;
}

/** A video of testsrc (and a sine tone unless `audio: false`); made once per process for each spec. */
export function makeVideo(spec: VideoSpec): Promise<Buffer> {
  const key = JSON.stringify(spec);
  let video = made.get(key);
  if (!video) {
    video = generate(spec);
    made.set(key, video);
  }
  return video;
}

async function generate(spec: VideoSpec): Promise<Buffer> {
  const { seconds, width, height, fps = 10, audio = true, container = 'mp4', tone = 440 } = spec;
  const ffmpeg = await program('ffmpeg');
  const codecs =
    container === 'mp4'
      ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', ...(audio ? ['-c:a', 'aac'] : []), '-movflags', '+faststart']
      : ['-c:v', 'libvpx-vp9', '-deadline', 'realtime', '-cpu-used', '8', '-b:v', '200k', '-pix_fmt', 'yuv420p', ...(audio ? ['-c:a', 'libopus'] : [])];
  return withWorkDir(async (dir) => {
    const out = `made.${container}`;
    await runProgram(
      {
        path: ffmpeg,
        args: [
          '-hide_banner', '-v', 'error', '-nostdin',
          '-f', 'lavfi', '-i', `testsrc=size=${width}x${height}:rate=${fps}:duration=${seconds}`,
          ...(audio ? ['-f', 'lavfi', '-i', `sine=frequency=${tone}:sample_rate=48000:duration=${seconds}`] : []),
          ...codecs,
          '-t', String(seconds),
          '-f', container,
          out,
        ],
        timeoutMs: 60_000,
      },
      dir,
    );
    return readFile(join(dir, out));
  });
}

/** An MP4 with only a sine tone: a video container without a video stream. */
export function audioOnlyMp4(seconds = 1): Promise<Buffer> {
  const key = `audio-only:${seconds}`;
  let video = made.get(key);
  if (!video) {
    video = (async () => {
      const ffmpeg = await program('ffmpeg');
      return withWorkDir(async (dir) => {
        await runProgram(
          { path: ffmpeg, args: ['-hide_banner', '-v', 'error', '-nostdin', '-f', 'lavfi', '-i', `sine=frequency=300:sample_rate=48000:duration=${seconds}`, '-c:a', 'aac', '-f', 'mp4', 'tone.mp4'], timeoutMs: 60_000 },
          dir,
        );
        return readFile(join(dir, 'tone.mp4'));
      });
    })();
    made.set(key, video);
  }
  return video;
}

interface Box {
  start: number;
  size: number;
  type: string;
}

/** The top-level boxes of an MP4. */
function boxes(mp4: Buffer): Box[] {
  const list: Box[] = [];
  for (let start = 0; start + 8 <= mp4.length; ) {
    const size = mp4.readUInt32BE(start);
    list.push({ start, size, type: mp4.toString('latin1', start + 4, start + 8) });
    if (size < 8) break;
    start += size;
  }
  return list;
}

function mdatOf(mp4: Buffer): Box {
  const mdat = boxes(mp4).find((b) => b.type === 'mdat');
  if (!mdat) throw new Error('no mdat box');
  return mdat;
}

/** The first half of the file: a download cut short (the upload's structure check refuses it). */
export function cutShort(bytes: Buffer): Buffer {
  return bytes.subarray(0, Math.floor(bytes.length / 2));
}

/**
 * A faststart MP4 whose media data stops halfway, with the mdat box resized to match: every box
 * fits the file, so only decoding finds the frames missing.
 */
export function truncatedMdat(mp4: Buffer): Buffer {
  const mdat = mdatOf(mp4);
  const keep = Math.floor(mdat.size / 2);
  const out = Buffer.from(mp4.subarray(0, mdat.start + keep));
  out.writeUInt32BE(keep, mdat.start);
  return out;
}

/** An MP4 whose media data is replaced by noise: the boxes are intact, the frames undecodable. */
export function scrambledMdat(mp4: Buffer): Buffer {
  const out = Buffer.from(mp4);
  const mdat = mdatOf(out);
  let x = 0x2545f491;
  for (let i = mdat.start + 8; i < mdat.start + mdat.size; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out[i] = x & 0xff;
  }
  return out;
}

/** Offsets of every `type` box (its type field) inside the moov box. */
function inner(mp4: Buffer, type: string): number[] {
  const moov = boxes(mp4).find((b) => b.type === 'moov');
  if (!moov) throw new Error('no moov box');
  const found: number[] = [];
  for (let i = moov.start; (i = mp4.indexOf(type, i + 1, 'latin1')) !== -1 && i < moov.start + moov.size; ) found.push(i);
  return found;
}

/**
 * An MP4 whose movie, track and media headers claim `factor` times the real duration (version-0
 * headers, as ffmpeg writes for short files); the sample tables still hold the real frames.
 */
export function lyingDuration(mp4: Buffer, factor: number): Buffer {
  const out = Buffer.from(mp4);
  const [mvhd] = inner(out, 'mvhd');
  const scale = (at: number) => out.writeUInt32BE(Math.min(0xffffffff, out.readUInt32BE(at) * factor), at);
  // mvhd/mdhd v0: type, version+flags, creation, modification, timescale, duration.
  scale(mvhd! + 20);
  for (const mdhd of inner(out, 'mdhd')) scale(mdhd + 20);
  // tkhd v0: type, version+flags, creation, modification, track id, reserved, duration.
  for (const tkhd of inner(out, 'tkhd')) scale(tkhd + 24);
  return out;
}

/**
 * An MP4 whose picture is of an unknown codec with a 0×0 sample entry: ffprobe sees a video
 * stream of zero size (the upload's checks, which read boxes, not codecs, let it through).
 */
export function zeroSized(mp4: Buffer): Buffer {
  const out = Buffer.from(mp4);
  const entry = out.indexOf('avc1', out.indexOf('stsd', 0, 'latin1'), 'latin1');
  if (entry === -1) throw new Error('no avc1 sample entry');
  out.write('zzzz', entry, 'latin1');
  // Visual sample entry after its type: reserved 6, data reference 2, pre-defined 16, then width and height.
  out.writeUInt32BE(0, entry + 28);
  return out;
}

/** An MP4 whose first track (the picture) carries a 90° rotation matrix, as phones write. */
export function rotated90(mp4: Buffer): Buffer {
  const out = Buffer.from(mp4);
  const [tkhd] = inner(out, 'tkhd');
  // tkhd v0 matrix at type + 44 (after volume): a b u / c d v / x y w (16.16; u v w 2.30); 90°: a=0 b=1 c=-1 d=0.
  const matrix = tkhd! + 44;
  out.writeInt32BE(0, matrix);
  out.writeInt32BE(0x10000, matrix + 4);
  out.writeInt32BE(-0x10000, matrix + 12);
  out.writeInt32BE(0, matrix + 16);
  return out;
}

export interface ProbedStream {
  type: string;
  codec: string;
  width?: number;
  height?: number;
  durationSeconds?: number;
}

export interface ProbedMedia {
  formatName: string;
  durationSeconds: number;
  streams: ProbedStream[];
}

/** What ffprobe reads from `bytes` (written to a temporary file with `extension`). */
export async function probeMedia(bytes: Buffer, extension: string): Promise<ProbedMedia> {
  const ffprobe = await program('ffprobe');
  return withWorkDir(async (dir) => {
    const file = `probe.${extension}`;
    await writeFile(join(dir, file), bytes);
    const { stdout } = await runProgram(
      { path: ffprobe, args: ['-v', 'error', '-show_entries', 'format=format_name,duration:stream=codec_type,codec_name,width,height,duration', '-of', 'json', file], timeoutMs: 30_000 },
      dir,
    );
    const json = JSON.parse(stdout.toString('utf8')) as {
      format: { format_name: string; duration?: string };
      streams: { codec_type: string; codec_name: string; width?: number; height?: number; duration?: string }[];
    };
    return {
      formatName: json.format.format_name,
      durationSeconds: Number(json.format.duration ?? 0),
      streams: json.streams.map((s) => ({
        type: s.codec_type,
        codec: s.codec_name,
        ...(s.width !== undefined ? { width: s.width, height: s.height } : {}),
        ...(s.duration !== undefined ? { durationSeconds: Number(s.duration) } : {}),
      })),
    };
  });
}
