/**
 * One server process per embedded SQLite database: a lock file beside the database file
 * (DATA_DIR/service.db.lock by default) holding the owner's pid. A second server on the same
 * database is refused with a pointer to PostgreSQL; a lock left by a dead process is taken over.
 * Short-lived admin commands do not take the lock: they run beside the live server.
 *
 * The lock is written completely before it becomes visible (write a private file, then
 * hard-link it into place, which fails if a lock exists), so a reader never sees a half-written
 * pid. A stale lock is taken over by renaming it away first; whoever's rename finds a pid other
 * than the dead one it judged puts the lock back and backs off, so two processes racing for a
 * stale lock do not both win.
 */
import { linkSync, mkdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export class LockHeldError extends Error {
  override name = 'LockHeldError';
}

/** The lock file guarding an embedded database file. */
export function lockFileFor(databaseFile: string): string {
  return `${databaseFile}.lock`;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 ? pid : 0;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function tryCreate(file: string): boolean {
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${process.pid}\n`, { mode: 0o600 });
  try {
    linkSync(tmp, file);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    unlinkSync(tmp);
  }
}

/** Moves a stale lock (held by `deadPid`, or unreadable) out of the way; false if it changed hands meanwhile. */
function removeStale(file: string, deadPid: number): boolean {
  const aside = `${file}.${process.pid}.stale`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return true;
    throw err;
  }
  const moved = readPid(aside);
  if (moved !== deadPid) {
    // Someone took the lock over between our read and our rename: give it back.
    try {
      linkSync(aside, file);
    } catch {
      // a third process holds it now; either way it is not ours
    }
    unlinkSync(aside);
    return false;
  }
  unlinkSync(aside);
  return true;
}

function heldMessage(pid: number, databaseFile: string, file: string): string {
  return (
    `Another server process (pid ${pid}) already uses the embedded SQLite database ${databaseFile}. ` +
    'Embedded SQLite runs as one server process; to run several API or worker processes, use PostgreSQL ' +
    '(DATABASE_URL=postgres://… with SECRET_KEY set). ' +
    `If no such process is running, delete ${file}.`
  );
}

/**
 * Takes the server lock of an embedded database file; returns its release function.
 * Throws LockHeldError when a live process holds it.
 */
export function acquireServerLock(databaseFile: string): () => void {
  const file = lockFileFor(databaseFile);
  mkdirSync(dirname(file), { recursive: true });
  for (let attempt = 0; attempt < 5; attempt++) {
    if (tryCreate(file)) {
      return () => {
        try {
          if (readPid(file) === process.pid) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    }
    const pid = readPid(file);
    if (pid === undefined) continue; // released meanwhile
    if (pid !== process.pid && pid > 0 && alive(pid)) throw new LockHeldError(heldMessage(pid, databaseFile, file));
    if (!removeStale(file, pid)) {
      const holder = readPid(file);
      throw new LockHeldError(heldMessage(holder ?? 0, databaseFile, file));
    }
  }
  throw new LockHeldError(`Could not take the server lock ${file}; another process keeps changing it.`);
}
