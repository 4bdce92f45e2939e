/**
 * The `local` provider type: engines running on the service's own machine, offline and without a
 * provider account (decisions.md section 5). Each engine serves one operation:
 *
 *   ffmpeg     video.edit       (ffmpeg and ffprobe, Debian package ffmpeg)
 *   espeak-ng  speech.generate  (espeak-ng; mp3 is encoded with ffmpeg)
 *   scanner    security.scan    (passive checks through the egress client)
 *   sprites    sprite.generate  (frames drawn by another provider, packed with sharp)
 *
 * Operations that need a generative model have no local engine: no placeholder pretends otherwise.
 */
import type { LocalContext } from '../types.js';
import type { Provider } from '../types.js';
import { espeakEngine } from './espeak.js';
import { ffmpegEngine } from './ffmpeg.js';
import { scannerEngine } from './scanner.js';
import { spritesEngine } from './sprites.js';

const ENGINES: Readonly<Record<string, (ctx: LocalContext) => Provider>> = {
  ffmpeg: ffmpegEngine,
  'espeak-ng': espeakEngine,
  scanner: scannerEngine,
  sprites: spritesEngine,
};

export function localProvider(engine: string, ctx: LocalContext): Provider {
  const make = ENGINES[engine];
  if (!make) throw new Error(`providers file: unknown local engine ${engine}`);
  return make(ctx);
}
