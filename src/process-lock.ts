/**
 * One server process per embedded SQLite database: a lock file in DATA_DIR holding the owner's
 * pid. A second server on the same file is refused with a pointer to PostgreSQL; a lock left by a
 * dead process is taken over. (Short-lived admin commands do not take the lock.)
 */
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export class LockHeldError extends Error {}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function acquireServerLock(dataDir: string): () => void {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, 'server.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return () => {
        try {
          if (readFileSync(file, 'utf8').trim() === String(process.pid)) unlinkSync(file);
        } catch {
          // already gone
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(file, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && alive(pid)) {
        throw new LockHeldError(
          `Another server process (pid ${pid}) already uses the embedded SQLite database in ${dataDir}. ` +
            'Embedded SQLite runs as one process; to run several API or worker processes, use PostgreSQL (DATABASE_URL=postgres://…).',
        );
      }
      unlinkSync(file);
    }
  }
  throw new LockHeldError(`Could not take the lock ${file}`);
}
