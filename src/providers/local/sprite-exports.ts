/**
 * The engine exports of a packed sprite: text that tells each engine where every frame lies in the
 * atlas, plus the animation (all frames in order, looping, FRAME_DURATION_MS each).
 *
 *   phaser   Phaser 3 atlas JSON (TexturePacker's "Phaser 3" layout: `textures[].frames[]`, which
 *            `this.load.atlas` and `this.load.multiatlas` read) with an `anims` list for
 *            `this.anims.fromJSON` naming the texture key TEXTURE_KEY.
 *   godot    A Godot 4 `SpriteFrames` resource (`.tres`): one `AtlasTexture` sub-resource per
 *            frame (its `region` in the atlas) and one looping animation "default".
 *   unity    TexturePacker JSON (hash): `frames` keyed by file name with `frame`, `sourceSize`,
 *            `spriteSourceSize`, `pivot`, and `meta.size` / `meta.image`, what TexturePacker JSON
 *            importers for Unity read.
 *   generic  Our own plain JSON: atlas size, every frame's rectangle and file, the strips.
 *
 * Invariant: every export names the same rectangles as the layout, in atlas pixels with the origin
 * at the top left, frame width and height unrotated and untrimmed. Exports reference the atlas by
 * ATLAS_FILE_NAME, relative to where the export itself is saved.
 */
import type { SpriteEngine } from '../../operations/sprite-generate.js';
import { frameName, type AtlasLayout, type StripLayout } from './sprite-pack.js';

export const ATLAS_FILE_NAME = 'atlas.png';
export const FRAME_DURATION_MS = 100;
const FPS = 1000 / FRAME_DURATION_MS;
/** The texture key the Phaser animation names (the key the atlas is loaded under). */
export const TEXTURE_KEY = 'sprite';
const APP = 'workspace-automation-service sprites engine';

export interface SpriteExport {
  format: SpriteEngine;
  frameWidth: number;
  frameHeight: number;
  frames: { index: number; x: number; y: number; width: number; height: number; durationMs: number }[];
  fileName: string;
  imageFileName: string;
  mediaType: string;
  content: Record<string, unknown> | string;
}

export function stripFileName(strip: StripLayout): string {
  return `strip-${strip.index + 1}.png`;
}

export function buildExports(engines: readonly SpriteEngine[], layout: AtlasLayout, strips: readonly StripLayout[]): Partial<Record<SpriteEngine, SpriteExport>> {
  const out: Partial<Record<SpriteEngine, SpriteExport>> = {};
  for (const engine of engines) {
    const base = {
      format: engine,
      frameWidth: layout.frameWidth,
      frameHeight: layout.frameHeight,
      frames: layout.regions.map((r) => ({ index: r.index, x: r.x, y: r.y, width: r.width, height: r.height, durationMs: FRAME_DURATION_MS })),
      imageFileName: ATLAS_FILE_NAME,
    };
    switch (engine) {
      case 'phaser':
        out.phaser = { ...base, fileName: 'sprite.phaser.json', mediaType: 'application/json', content: phaserAtlas(layout) };
        break;
      case 'godot':
        out.godot = { ...base, fileName: 'sprite.tres', mediaType: 'text/plain; charset=utf-8', content: godotSpriteFrames(layout) };
        break;
      case 'unity':
        out.unity = { ...base, fileName: 'sprite.unity.json', mediaType: 'application/json', content: texturePackerHash(layout) };
        break;
      case 'generic':
        out.generic = { ...base, fileName: 'sprite.json', mediaType: 'application/json', content: genericJson(layout, strips) };
        break;
    }
  }
  return out;
}

function rect(r: { x: number; y: number; width: number; height: number }) {
  return { x: r.x, y: r.y, w: r.width, h: r.height };
}

function phaserAtlas(layout: AtlasLayout): Record<string, unknown> {
  const size = { w: layout.frameWidth, h: layout.frameHeight };
  return {
    textures: [
      {
        image: ATLAS_FILE_NAME,
        format: 'RGBA8888',
        size: { w: layout.width, h: layout.height },
        scale: 1,
        frames: layout.regions.map((r) => ({
          filename: r.name,
          rotated: false,
          trimmed: false,
          sourceSize: size,
          spriteSourceSize: { x: 0, y: 0, ...size },
          frame: rect(r),
        })),
      },
    ],
    anims: [
      {
        key: 'default',
        type: 'frame',
        frames: layout.regions.map((r) => ({ key: TEXTURE_KEY, frame: r.name, duration: 0 })),
        frameRate: FPS,
        repeat: -1,
      },
    ],
    meta: { app: APP, version: '1', scale: '1' },
  };
}

/**
 * Godot 4 text resource (format=3). The atlas is an external resource by a path relative to the
 * `.tres` (Godot resolves a relative path against the resource's own folder).
 */
function godotSpriteFrames(layout: AtlasLayout): string {
  const lines: string[] = [];
  lines.push(`[gd_resource type="SpriteFrames" load_steps=${layout.regions.length + 2} format=3]`, '');
  lines.push(`[ext_resource type="Texture2D" path="${ATLAS_FILE_NAME}" id="1_atlas"]`, '');
  for (const r of layout.regions) {
    lines.push(`[sub_resource type="AtlasTexture" id="AtlasTexture_${r.index + 1}"]`);
    lines.push('atlas = ExtResource("1_atlas")');
    lines.push(`region = Rect2(${r.x}, ${r.y}, ${r.width}, ${r.height})`);
    // Sampling stays inside the region (no bleeding from a neighbour when filtered).
    lines.push('filter_clip = true', '');
  }
  const frames = layout.regions.map((r) => `{\n"duration": 1.0,\n"texture": SubResource("AtlasTexture_${r.index + 1}")\n}`).join(', ');
  lines.push('[resource]');
  lines.push(`animations = [{\n"frames": [${frames}],\n"loop": true,\n"name": &"default",\n"speed": ${FPS.toFixed(1)}\n}]`);
  return `${lines.join('\n')}\n`;
}

function texturePackerHash(layout: AtlasLayout): Record<string, unknown> {
  const size = { w: layout.frameWidth, h: layout.frameHeight };
  return {
    frames: Object.fromEntries(
      layout.regions.map((r) => [
        `${r.name}.png`,
        { frame: rect(r), rotated: false, trimmed: false, spriteSourceSize: { x: 0, y: 0, ...size }, sourceSize: size, pivot: { x: 0.5, y: 0.5 } },
      ]),
    ),
    meta: { app: APP, version: '1.0', image: ATLAS_FILE_NAME, format: 'RGBA8888', size: { w: layout.width, h: layout.height }, scale: '1' },
  };
}

function genericJson(layout: AtlasLayout, strips: readonly StripLayout[]): Record<string, unknown> {
  return {
    version: 1,
    image: ATLAS_FILE_NAME,
    width: layout.width,
    height: layout.height,
    frameWidth: layout.frameWidth,
    frameHeight: layout.frameHeight,
    padding: layout.padding,
    powerOfTwo: layout.powerOfTwo,
    loop: true,
    frames: layout.regions.map((r) => ({ index: r.index, name: r.name, file: `${r.name}.png`, x: r.x, y: r.y, width: r.width, height: r.height, durationMs: FRAME_DURATION_MS })),
    strips: strips.map((s) => ({ index: s.index, file: stripFileName(s), width: s.width, height: s.height, frames: s.frames.map((i, k) => ({ index: i, name: frameName(i), x: k * layout.frameWidth, y: 0 })) })),
  };
}
