/**
 * One server process per embedded SQLite database, enforced by the kernel: the server holds an
 * exclusive SQLite lock (a POSIX advisory lock, fcntl) on a small lock database beside the
 * database file (DATA_DIR/service.db.server-lock by default) for as long as it runs. The kernel
 * drops such a lock the moment the holder's descriptors close: at a normal exit, at kill -9, while
 * the killed process is still an unreaped zombie. So a dead holder, a reused pid or a left-over
 * file never blocks a start; only a live holder does, and a start that finds the lock held waits
 * for it (LOCK_WAIT_MS) before giving up with LockHeldError (exit code 75, "try again later").
 *
 * The holder writes its pid into the file's header (SQLite's user_version, bytes 60-63) only so
 * that a refused start can name it; nothing decides by the pid. The file is never deleted: a
 * waiter may already have it open, and deleting it would let a third process lock a new file
 * under the same name while the waiter locks the old one.
 *
 * POSIX locks belong to the process, and closing ANY descriptor of the file drops all of the
 * process's locks on it. So the holding process never opens the file other than through this
 * module: a second acquire in the same process is refused from memory without touching it.
 * Short-lived admin commands do not take the lock: they run beside the live server.
 */
import { closeSync, mkdirSync, openSync, readSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

export class LockHeldError extends Error {
  override name = 'LockHeldError';
}

/** The lock file exists but is not a lock database of this service: an operator must move it away (exit 78). */
export class LockFileError extends Error {
  override name = 'LockFileError';
}

/** Exit code of a start refused because another live process holds the lock (EX_TEMPFAIL: try again later). */
export const LOCK_HELD_EXIT_CODE = 75;

/** Default LOCK_WAIT_MS: how long a start waits for a held lock before giving up. */
export const DEFAULT_LOCK_WAIT_MS = 5000;

const POLL_MS = 50;
/** Marks the lock database as ours (SQLite application_id, header bytes 68-71): "WASL". */
const APPLICATION_ID = 0x5741534c;

/** The lock file guarding an embedded database file. */
export function lockFileFor(databaseFile: string): string {
  return `${databaseFile}.server-lock`;
}

/** The pid-file lock of versions before the kernel lock; removed once the new lock is held. */
function legacyLockFileFor(databaseFile: string): string {
  return `${databaseFile}.lock`;
}

/** Lock files this process holds (resolved paths): a second acquire here must not open them. */
const heldHere = new Set<string>();

export interface AcquireOptions {
  /** How long to wait for a held lock (default DEFAULT_LOCK_WAIT_MS); 0 tries once. */
  waitMs?: number;
  /** Stops the wait early (a signal during start-up); the acquire then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Told once when the first attempt finds the lock held and the wait begins (the holder's pid, if named). */
  onWait?: (holderPid: number | undefined) => void;
}

/**
 * The pid the last holder wrote into the lock file's header, or undefined: names a holder in a
 * message, decides nothing. Never call it in the holding process (closing the descriptor it opens
 * would drop that process's lock).
 */
export function lockHolderPid(databaseFile: string): number | undefined {
  return readHolderPid(resolve(lockFileFor(databaseFile)));
}

function readHolderPid(file: string): number | undefined {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch {
    return undefined;
  }
  try {
    const header = Buffer.alloc(72);
    if (readSync(fd, header, 0, 72, 0) < 72) return undefined;
    if (header.readUInt32BE(68) !== APPLICATION_ID) return undefined;
    const pid = header.readUInt32BE(60);
    return pid > 0 ? pid : undefined;
  } finally {
    closeSync(fd);
  }
}

function heldMessage(pid: number | undefined, databaseFile: string, waitedMs: number): string {
  const holder = pid === undefined ? 'Another server process' : `Another server process (pid ${pid})`;
  return (
    `${holder} already uses the embedded SQLite database ${databaseFile} ` +
    `(waited ${waitedMs} ms for its lock; LOCK_WAIT_MS sets how long). ` +
    'Embedded SQLite runs as one server process; to run several API or worker processes, use PostgreSQL ' +
    '(DATABASE_URL=postgres://… with SECRET_KEY set).'
  );
}

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED';
}

/** One attempt: the open lock connection when the lock was taken, undefined when another process holds it. */
function tryLock(file: string): Database.Database | undefined {
  const db = new Database(file, { timeout: 0 });
  try {
    // In exclusive locking mode SQLite keeps the EXCLUSIVE lock after the first write
    // transaction commits, until the connection closes.
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE');
    db.pragma(`application_id = ${APPLICATION_ID}`);
    db.pragma(`user_version = ${process.pid}`);
    db.exec('COMMIT');
    return db;
  } catch (err) {
    db.close();
    if (isBusy(err)) return undefined;
    throw new LockFileError(`Cannot take the server lock ${file}: ${(err as Error).message}. If it is not a lock file of this service, move it away.`);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolveSleep, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolveSleep();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Takes the server lock of an embedded database file, waiting up to `waitMs` while a live process
 * holds it; resolves with the release function (which closes the lock connection: the kernel
 * drops the lock). Rejects with LockHeldError when the wait ends with the lock still held.
 */
export async function acquireServerLock(databaseFile: string, options: AcquireOptions = {}): Promise<() => void> {
  const waitMs = options.waitMs ?? DEFAULT_LOCK_WAIT_MS;
  const file = resolve(lockFileFor(databaseFile));
  if (heldHere.has(file)) throw new LockHeldError(heldMessage(process.pid, databaseFile, 0));
  mkdirSync(dirname(file), { recursive: true });
  const started = Date.now();
  let waitAnnounced = false;
  for (;;) {
    const db = tryLock(file);
    if (db) {
      heldHere.add(file);
      rmSync(legacyLockFileFor(databaseFile), { force: true });
      let released = false;
      return () => {
        if (released) return;
        released = true;
        heldHere.delete(file);
        db.close();
      };
    }
    const waited = Date.now() - started;
    if (waited >= waitMs) throw new LockHeldError(heldMessage(readHolderPid(file), databaseFile, waited));
    if (!waitAnnounced) {
      waitAnnounced = true;
      options.onWait?.(readHolderPid(file));
    }
    await sleep(Math.min(POLL_MS, waitMs - waited), options.signal);
  }
}
