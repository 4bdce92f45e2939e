/**
 * Where each frame goes: the atlas layout (maxrects-packer) and the horizontal strips.
 *
 * Invariants of an atlas layout: every region lies inside the atlas, no two regions overlap,
 * two regions are at least `padding` pixels apart (the packer adds it to the right and below
 * each frame, never past the atlas edge), and with `powerOfTwo` the atlas width and height are
 * powers of two. All frames share one size, so no frame is ever rotated or trimmed: the
 * exports can say "the frame is exactly this rectangle".
 */
import { MaxRectsPacker } from 'maxrects-packer';

/** Largest atlas side: 64 frames of 512×512 with 16 pixels of padding need 8 × 528 = 4224. */
const MAX_ATLAS_SIDE = 8192;
/** Widest strip: a wider one is split (many image tools and GPUs stop at 4096 pixels). */
export const MAX_STRIP_WIDTH = 4096;

export interface FrameRegion {
  /** Position of the frame in the animation (0-based). */
  index: number;
  /** Its name in the exports ("frame-001"). */
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface AtlasLayout {
  width: number;
  height: number;
  frameWidth: number;
  frameHeight: number;
  padding: number;
  powerOfTwo: boolean;
  /** One region per frame, in frame order. */
  regions: FrameRegion[];
}

export interface StripLayout {
  /** Position of the strip (0-based). */
  index: number;
  width: number;
  height: number;
  /** The frames it holds, left to right; frame k of the strip starts at x = k × frameWidth. */
  frames: number[];
}

/** The name of frame `index` in files and exports (1-based, like the files of the result). */
export function frameName(index: number): string {
  return `frame-${String(index + 1).padStart(3, '0')}`;
}

/** Packs `count` frames of one size into a single atlas. */
export function packAtlas(count: number, frameWidth: number, frameHeight: number, padding: number, powerOfTwo: boolean): AtlasLayout {
  const packer = new MaxRectsPacker(MAX_ATLAS_SIDE, MAX_ATLAS_SIDE, padding, { smart: true, pot: powerOfTwo, square: false, allowRotation: false, border: 0 });
  for (let index = 0; index < count; index++) packer.add(frameWidth, frameHeight, { index });
  // The input bounds (64 frames of at most 512×512, padding at most 16) always fit one bin.
  if (packer.bins.length !== 1) throw new Error(`sprite atlas: ${count} frames of ${frameWidth}×${frameHeight} do not fit one ${MAX_ATLAS_SIDE}-pixel atlas`);
  const bin = packer.bins[0]!;
  const regions: FrameRegion[] = new Array(count);
  for (const rect of bin.rects) {
    const index = (rect.data as { index: number }).index;
    if (rect.rot) throw new Error('sprite atlas: the packer rotated a frame');
    regions[index] = { index, name: frameName(index), x: rect.x, y: rect.y, width: rect.width, height: rect.height };
  }
  if (regions.some((r) => r === undefined)) throw new Error('sprite atlas: the packer lost a frame');
  return { width: bin.width, height: bin.height, frameWidth, frameHeight, padding, powerOfTwo, regions };
}

/** Frames side by side, as many per strip as fit in MAX_STRIP_WIDTH (at least one). */
export function stripLayouts(count: number, frameWidth: number, frameHeight: number, maxWidth = MAX_STRIP_WIDTH): StripLayout[] {
  const perStrip = Math.max(1, Math.floor(maxWidth / frameWidth));
  const strips: StripLayout[] = [];
  for (let first = 0; first < count; first += perStrip) {
    const frames = Array.from({ length: Math.min(perStrip, count - first) }, (_, k) => first + k);
    strips.push({ index: strips.length, width: frames.length * frameWidth, height: frameHeight, frames });
  }
  return strips;
}
