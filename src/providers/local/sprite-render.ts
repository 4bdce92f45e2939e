/**
 * Pixels of a sprite, with sharp: a drawn image made into a frame (RGBA of the frame size), and
 * frames copied into an atlas or a strip.
 *
 * Invariant: the atlas and strips hold exactly the frames' pixels. Frames are copied row by row
 * into one raw RGBA buffer and encoded once as PNG (lossless), never composited: blending a
 * half-transparent pixel over the transparent background would round its colour.
 */
import type Sharp from 'sharp';

/**
 * sharp (libvips) is loaded on the first sprite, not at start-up: it is a native library that
 * every process start would otherwise pay for (issue 19: restarts), as media/inspect.ts does.
 */
let sharpModule: Promise<typeof Sharp> | undefined;
function loadSharp(): Promise<typeof Sharp> {
  sharpModule ??= import('sharp').then((m) => m.default);
  return sharpModule;
}
import type { AtlasLayout, StripLayout } from './sprite-pack.js';

const CHANNELS = 4;
const TRANSPARENT = { r: 0, g: 0, b: 0, alpha: 0 };

/** A frame: its PNG file and the same pixels as raw RGBA rows. */
export interface Frame {
  png: Buffer;
  raw: Buffer;
}

/** What a frame source drew: encoded image bytes of any size, or raw RGBA pixels. */
export type Drawing = { bytes: Buffer } | { raw: Buffer; width: number; height: number };

/**
 * Makes a drawing into a frame of exactly width × height: resized to fit inside it with its
 * aspect ratio kept (no part of the figure is cut off), the rest transparent.
 */
export async function toFrame(drawing: Drawing, width: number, height: number): Promise<Frame> {
  const sharp = await loadSharp();
  const source = 'bytes' in drawing ? sharp(drawing.bytes) : sharp(drawing.raw, { raw: { width: drawing.width, height: drawing.height, channels: CHANNELS } });
  const { data, info } = await source
    .rotate() // a camera orientation tag, if any, is applied, not lost
    .resize(width, height, { fit: 'contain', background: TRANSPARENT })
    .ensureAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.width !== width || info.height !== height || info.channels !== CHANNELS) throw new Error(`sprite frame: got ${info.width}×${info.height}×${info.channels}`);
  return { png: await encodePng(data, width, height), raw: data };
}

/** The raw RGBA pixels of a stored frame, checked to be of the frame size. */
export async function readFrame(png: Buffer, width: number, height: number): Promise<Frame | undefined> {
  const sharp = await loadSharp();
  try {
    const { data, info } = await sharp(png).ensureAlpha().raw().toBuffer({ resolveWithObject: true });
    if (info.width !== width || info.height !== height || info.channels !== CHANNELS) return undefined;
    return { png, raw: data };
  } catch {
    return undefined;
  }
}

/** The atlas PNG: each frame's pixels at its region, transparent elsewhere. */
export function renderAtlas(layout: AtlasLayout, frames: readonly Frame[]): Promise<Buffer> {
  const canvas = Buffer.alloc(layout.width * layout.height * CHANNELS);
  for (const region of layout.regions) blit(canvas, layout.width, frames[region.index]!.raw, layout.frameWidth, layout.frameHeight, region.x, region.y);
  return encodePng(canvas, layout.width, layout.height);
}

/** A strip PNG: its frames left to right, edge to edge. */
export function renderStrip(strip: StripLayout, frames: readonly Frame[], frameWidth: number, frameHeight: number): Promise<Buffer> {
  const canvas = Buffer.alloc(strip.width * strip.height * CHANNELS);
  strip.frames.forEach((index, k) => blit(canvas, strip.width, frames[index]!.raw, frameWidth, frameHeight, k * frameWidth, 0));
  return encodePng(canvas, strip.width, strip.height);
}

function blit(canvas: Buffer, canvasWidth: number, frame: Buffer, width: number, height: number, left: number, top: number): void {
  const rowBytes = width * CHANNELS;
  for (let y = 0; y < height; y++) frame.copy(canvas, ((top + y) * canvasWidth + left) * CHANNELS, y * rowBytes, (y + 1) * rowBytes);
}

async function encodePng(raw: Buffer, width: number, height: number): Promise<Buffer> {
  const sharp = await loadSharp();
  return sharp(raw, { raw: { width, height, channels: CHANNELS } }).png().toBuffer();
}
