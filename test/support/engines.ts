/**
 * Tests of local engines need their programs (ffmpeg and ffprobe, espeak-ng). On a developer
 * machine without them such a test is skipped with a printed reason; in CI (`CI=true`) a missing
 * program fails the test instead, since .ci/run installs them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { probeEngines, type LocalEngines } from '../../src/providers/local/engines.js';
import { waitFor } from './wait.js';

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

/** True while a process runs (a zombie awaiting its reaper counts as gone). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));
  } catch {
    return false;
  }
}

/** The pid a program wrote into `dir/name` (`echo $$ > name`), once it is there. */
export function pidWritten(dir: string, name: string): Promise<number> {
  return waitFor(`${name} to be written`, () => {
    try {
      const pid = Number(readFileSync(join(dir, name), 'utf8').trim());
      return pid > 0 ? pid : false;
    } catch {
      return false;
    }
  });
}
