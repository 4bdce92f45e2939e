/**
 * Frames drawn without any provider (`"frames": "simulated"`): a ball rolling round an ellipse,
 * drawn into raw RGBA pixels. A pure function of the prompt, the frame and the frame count, so a
 * retry draws the same frames; every frame differs from the others (the ball moves, its colour
 * turns and a spoke on it rotates), and its antialiased edge is half transparent, so a test that
 * compares an atlas region with its frame compares distinct, non-trivial pixels.
 */
import { createHash } from 'node:crypto';
import type { Drawing } from './sprite-render.js';

export function drawSimulatedFrame(prompt: string, index: number, count: number, width: number, height: number): Drawing {
  const seed = createHash('sha256').update(prompt).digest().readUInt32BE(0);
  const turn = count > 0 ? index / count : 0;
  const radius = Math.max(2, Math.min(width, height) * 0.3);
  const angle = 2 * Math.PI * turn;
  const cx = width / 2 + Math.cos(angle) * Math.max(0, width / 2 - radius - 1);
  const cy = height / 2 + Math.sin(angle) * Math.max(0, height / 2 - radius - 1);
  const [r, g, b] = hueToRgb(((seed % 360) / 360 + turn) % 1);
  const spoke = { x: Math.cos(angle * 2), y: Math.sin(angle * 2) };
  const raw = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const dx = x + 0.5 - cx;
      const dy = y + 0.5 - cy;
      const d = Math.hypot(dx, dy);
      const coverage = Math.max(0, Math.min(1, radius - d + 0.5));
      if (coverage === 0) continue;
      // Distance from the spoke's line through the centre: the spoke is drawn dark.
      const onSpoke = Math.abs(dx * spoke.y - dy * spoke.x) < Math.max(0.75, radius / 8) && dx * spoke.x + dy * spoke.y > 0;
      const shade = onSpoke ? 0.25 : 0.6 + 0.4 * (1 - d / radius);
      const o = (y * width + x) * 4;
      raw[o] = Math.round(r * shade);
      raw[o + 1] = Math.round(g * shade);
      raw[o + 2] = Math.round(b * shade);
      raw[o + 3] = Math.round(255 * coverage);
    }
  }
  return { raw, width, height };
}

/** A saturated colour of hue `h` (0..1), as 0..255 channels. */
function hueToRgb(h: number): [number, number, number] {
  const k = (n: number) => (n + h * 6) % 6;
  const f = (n: number) => 255 * (1 - Math.max(0, Math.min(k(n), 4 - k(n), 1)));
  return [Math.round(f(5)), Math.round(f(3)), Math.round(f(1))];
}
