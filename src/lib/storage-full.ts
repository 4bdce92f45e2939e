/**
 * Is a failure the server's storage being full, as opposed to a fault of the request or of this
 * code? Such failures are answered 507 STORAGE_FULL (http/error-handler.ts) and fail a job that
 * could not store its files with errorCode STORAGE_FULL (modules/jobs/executor.ts); nothing
 * partial is kept (docs/operations.md, "A full disk").
 *
 * Recognised: ENOSPC (no space left on the device) and EDQUOT (the disk quota of the user the
 * service runs as) from a file system call; better-sqlite3's SQLITE_FULL (the embedded database
 * could not grow its file or WAL); PostgreSQL's SQLSTATE 53100 (disk_full, the server's own
 * disk). Causes are followed (`cause`, AggregateError), as for an unreachable database.
 */

export type FullStorage = 'files' | 'database';

const FILE_CODES = new Set(['ENOSPC', 'EDQUOT']);
const DATABASE_CODES = new Set(['SQLITE_FULL', '53100']);

/** Which storage is full when `err` says so: the media files, or the database; else undefined. */
export function fullStorageOf(err: unknown, depth = 0): FullStorage | undefined {
  if (depth > 5 || typeof err !== 'object' || err === null) return undefined;
  const e = err as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string') {
    if (FILE_CODES.has(e.code)) return 'files';
    if (DATABASE_CODES.has(e.code)) return 'database';
  }
  if (Array.isArray(e.errors)) {
    for (const inner of e.errors) {
      const found = fullStorageOf(inner, depth + 1);
      if (found) return found;
    }
  }
  return fullStorageOf(e.cause, depth + 1);
}

export function isStorageFull(err: unknown): boolean {
  return fullStorageOf(err) !== undefined;
}
