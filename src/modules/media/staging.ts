/**
 * The local staging directory where uploads are written while they stream in and are checked.
 * Every staged file is removed by the request that made it; files older than a day can only be
 * leftovers of a crash, and are swept when a blob store starts.
 */
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { newId } from '../../lib/ids.js';

const STALE_STAGING_MS = 24 * 60 * 60 * 1000;

export function newStagingPath(dir: string): string {
  return join(dir, `${newId()}.part`);
}

export async function listStaged(dir: string): Promise<string[]> {
  return readdir(dir).catch(() => []);
}

export async function sweepStaleStaging(dir: string): Promise<void> {
  const now = Date.now();
  for (const name of await listStaged(dir)) {
    const path = join(dir, name);
    const s = await stat(path).catch(() => undefined);
    if (s && now - s.mtimeMs > STALE_STAGING_MS) await rm(path, { force: true }).catch(() => {});
  }
}
