/**
 * A small file system of the test's own to fill up: a size-limited tmpfs, so that a DATA_DIR on it
 * meets ENOSPC exactly as on a full disk (the full-disk fault tests). Mounting needs root, which CI
 * has; elsewhere, or where mounting is not allowed (a container without CAP_SYS_ADMIN), the suite
 * skips with the reason printed, and under CI=true fails instead (requirements.ts).
 */
import { spawnSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readdirSync, rmdirSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { requireOrSkip } from './requirements.js';

export interface SmallDisk {
  /** The mount point. */
  dir: string;
  /** Fills the file system to the last byte with filler files; returns the bytes written. */
  fill(): number;
  /** Removes the filler files. */
  free(): void;
  /** Bytes an unprivileged writer could still write. */
  available(): number;
  /** Unmounts the file system and removes the mount point. */
  unmount(): void;
}

function mount(dir: string, sizeMiB: number): string | undefined {
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMiB}m,mode=0700`, 'tmpfs', dir], { encoding: 'utf8' });
  if (r.error) return `mount could not be run: ${r.error.message}`;
  return r.status === 0 ? undefined : `mount -t tmpfs failed (${r.status}): ${r.stderr.trim()}`;
}

function unmount(dir: string): void {
  const r = spawnSync('umount', [dir], { encoding: 'utf8' });
  // Still busy (a process that has not closed its files yet): detach it, the kernel frees it later.
  if (r.status !== 0) spawnSync('umount', ['-l', dir]);
  rmdirSync(dir);
}

/** `false` when a small tmpfs can be mounted here; otherwise the skip reason (or a thrown error under CI=true). */
export function needsSmallDisk(): string | false {
  if (process.platform !== 'linux') return requireOrSkip('needs Linux (a tmpfs of the test\'s own)');
  if (process.getuid?.() !== 0) return requireOrSkip('needs root to mount a small tmpfs (CI runs as root)');
  const dir = mkdtempSync(join(tmpdir(), 'was-disk-probe-'));
  const failed = mount(dir, 1);
  if (failed) {
    rmdirSync(dir);
    return requireOrSkip(`cannot mount a tmpfs: ${failed}`);
  }
  unmount(dir);
  return false;
}

/** Mounts a tmpfs of `sizeMiB` MiB on a new directory. */
export function mountSmallDisk(sizeMiB: number): SmallDisk {
  const dir = mkdtempSync(join(tmpdir(), 'was-small-disk-'));
  const failed = mount(dir, sizeMiB);
  if (failed) {
    rmdirSync(dir);
    throw new Error(failed);
  }
  let fillers = 0;
  const available = () => {
    const s = statfsSync(dir);
    return Number(s.bavail) * Number(s.bsize);
  };
  return {
    dir,
    available,
    fill() {
      let written = 0;
      // Large writes first, then ever smaller ones: the last page is filled too.
      for (const chunk of [1024 * 1024, 64 * 1024, 4096, 512, 1]) {
        const path = join(dir, `filler-${fillers++}`);
        let fd: number;
        try {
          fd = openSync(path, 'w');
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
        const bytes = Buffer.alloc(chunk, 0x5a);
        try {
          for (;;) written += writeSync(fd, bytes);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        } finally {
          closeSync(fd);
        }
      }
      return written;
    },
    free() {
      for (const name of readdirSync(dir)) if (name.startsWith('filler-')) rmSync(join(dir, name), { force: true });
    },
    unmount: () => unmount(dir),
  };
}
