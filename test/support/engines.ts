/**
 * Tests of local engines need their programs (ffmpeg and ffprobe, espeak-ng). On a developer
 * machine without them such a test is skipped with a printed reason; in CI (`CI=true`) a missing
 * program fails the test instead, since .ci/run installs them.
 */
import { probeEngines, type LocalEngines } from '../../src/providers/local/engines.js';

let probed: Promise<LocalEngines> | undefined;

/** The programs found on this machine (FFMPEG_PATH, FFPROBE_PATH, ESPEAK_NG_PATH or PATH). */
export function installedEngines(): Promise<LocalEngines> {
  probed ??= probeEngines({ ffmpegPath: process.env.FFMPEG_PATH, ffprobePath: process.env.FFPROBE_PATH, espeakPath: process.env.ESPEAK_NG_PATH });
  return probed;
}

const PACKAGES: Record<keyof LocalEngines, string> = { ffmpeg: 'ffmpeg', ffprobe: 'ffmpeg', espeak: 'espeak-ng' };

/**
 * `false` when every program is there; otherwise a skip reason (printed by node:test). In CI a
 * missing program throws, failing the suite that asked.
 */
export async function missingPrograms(...programs: (keyof LocalEngines)[]): Promise<string | false> {
  const engines = await installedEngines();
  const missing = programs.filter((p) => !engines[p]);
  if (missing.length === 0) return false;
  const reason = `needs ${missing.map((p) => (p === 'espeak' ? 'espeak-ng' : p)).join(', ')} (Debian packages: ${[...new Set(missing.map((p) => PACKAGES[p]))].join(', ')})`;
  if (process.env.CI === 'true') throw new Error(`CI must have every engine: this test ${reason}`);
  process.stdout.write(`# skipped: ${reason}\n`);
  return reason;
}
