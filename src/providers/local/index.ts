/**
 * The `local` provider type: engines running on the service's own machine, offline and without a
 * provider account (decisions.md section 5). Each engine serves one operation:
 *
 *   ffmpeg     video.edit       (ffmpeg and ffprobe, Debian package ffmpeg)
 *   espeak-ng  speech.generate  (espeak-ng; mp3 is encoded with ffmpeg)
 *   scanner    security.scan    (passive checks through the egress client)
 *   sprites    sprite.generate  (frames drawn by another provider, packed with sharp)
 *   rigger     three-d.rig      (a skeleton and skin weights from the mesh's shape, in-process)
 *
 * Operations that need a generative model have no local engine: no placeholder pretends otherwise.
 */
import type { OperationId } from '../../operations/ids.js';
import type { PriceParam } from '../../operations/pricing.js';
import type { ProvidersFile } from '../specs.js';
import type { LocalContext } from '../types.js';
import type { Provider } from '../types.js';
import type { LocalEngines } from './engines.js';
import { espeakEngine } from './espeak.js';
import { ffmpegEngine } from './ffmpeg.js';
import { scannerEngine } from './scanner.js';
import { riggerEngine } from './rig.js';
import { spritesEngine } from './sprites.js';

export interface LocalEngine {
  /** The one operation it serves. */
  serves: OperationId;
  /** Price parameters it adds to the operation's own: what it bounds itself (ffmpeg: the output's seconds). */
  priceParams: readonly PriceParam[];
  /** The programs it runs (found at start-up: engines.ts) and the Debian package that has them. */
  programs: readonly (keyof LocalEngines)[];
  package: string;
  make(ctx: LocalContext): Provider;
}

/** The engines of `local` providers: one row each. */
export const LOCAL_ENGINES: Readonly<Record<string, LocalEngine>> = {
  ffmpeg: { serves: 'video.edit', priceParams: ['perSecondMillicents'], programs: ['ffmpeg', 'ffprobe'], package: 'ffmpeg', make: ffmpegEngine },
  'espeak-ng': { serves: 'speech.generate', priceParams: [], programs: ['espeak'], package: 'espeak-ng', make: espeakEngine },
  scanner: { serves: 'security.scan', priceParams: [], programs: [], package: '', make: scannerEngine },
  sprites: { serves: 'sprite.generate', priceParams: [], programs: [], package: '', make: spritesEngine },
  rigger: { serves: 'three-d.rig', priceParams: [], programs: [], package: '', make: riggerEngine },
};

/** The adapter of a route to a local engine (the providers file has checked the engine's name). */
export function localProvider(ctx: LocalContext): Provider {
  const engine = ctx.spec.engine;
  const row = engine !== undefined && Object.hasOwn(LOCAL_ENGINES, engine) ? LOCAL_ENGINES[engine] : undefined;
  if (!row) throw new Error(`providers file: unknown local engine ${engine}`);
  return row.make(ctx);
}

/** Engines of the file whose programs are missing, as start-up problems naming what to install. */
export function missingEngineProblems(file: ProvidersFile, engines: LocalEngines): string[] {
  const problems: string[] = [];
  for (const route of file.operations.values()) {
    if (!route.engine || !Object.hasOwn(LOCAL_ENGINES, route.engine)) continue;
    const needs = LOCAL_ENGINES[route.engine]!;
    const missing = needs.programs.filter((p) => !engines[p]);
    if (missing.length > 0) {
      const names = missing.map((p) => (p === 'espeak' ? 'espeak-ng' : p));
      problems.push(
        `PROVIDERS_FILE operations.${route.operationId}: engine "${route.engine}" needs ${names.join(' and ')}, which ${missing.length > 1 ? 'are' : 'is'} not installed ` +
          `(install the Debian package ${needs.package}, or set ${names.map((n) => `${n.toUpperCase().replace(/-/g, '_')}_PATH`).join(' / ')})`,
      );
    }
  }
  return problems;
}
