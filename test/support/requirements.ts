/**
 * What a suite needs from the machine (the built server, PostgreSQL, a program such as openssl or
 * script): on a developer machine a missing one skips the suite with a printed reason; under
 * CI=true (set by .ci/run) it fails the run instead, naming what is missing, so nothing is skipped
 * silently where everything must be tested.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';

/** `false` when nothing is missing; otherwise the skip reason (printed), or a thrown error under CI=true. */
export function requireOrSkip(missing: string | false): string | false {
  if (!missing) return false;
  if (process.env.CI === 'true') throw new Error(`CI=true: a missing requirement fails the run instead of skipping: ${missing}`);
  process.stdout.write(`# skipped: ${missing}\n`);
  return missing;
}

/** The built server (`npm run build`; `npm test` builds first). */
export function needsDist(): string | false {
  return requireOrSkip(existsSync(resolve('dist/main.js')) ? false : 'dist/main.js is missing: run `npm run build` first (npm test does)');
}

/** A real PostgreSQL server named by TEST_DATABASE_URL (.ci/run sets it). */
export function needsPostgres(): string | false {
  return requireOrSkip(process.env.TEST_DATABASE_URL ? false : 'needs TEST_DATABASE_URL (a real PostgreSQL server)');
}

/** A program on PATH that answers `args` (its version) with exit status 0. */
export function needsProgram(program: string, args: string[], debianPackage: string): string | false {
  const found = spawnSync(program, args, { stdio: 'ignore' }).status === 0;
  return requireOrSkip(found ? false : `needs ${program} (Debian package ${debianPackage})`);
}
