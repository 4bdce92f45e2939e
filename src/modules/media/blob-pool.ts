/**
 * Durable bytes for the local blob store without two fsyncs per blob. Job results are often the
 * same bytes again (a regenerated image, a fixed-format export, every simulated result): each
 * distinct content is written once into DATA_DIR/media/.pool/<sha256> (staged, fsynced, renamed,
 * directory fsynced), and each blob is a hard link to it, so a blob costs a link and its
 * directory's fsync. Directory fsyncs are shared: every link made before a sync starts is
 * covered by it, so concurrent jobs writing into one workspace directory share one fsync.
 *
 * Links make the pool safe to share: removing one blob removes a link, never bytes another blob
 * names. A pool file whose only link is the pool's own (its blob's row was never written) takes
 * space until the same bytes are produced again. Blobs are never modified in place.
 */
import { link, mkdir, open, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { newStagingPath } from './staging.js';

export async function fsyncPath(path: string, flags: 'r' | 'r+' = 'r'): Promise<void> {
  const handle = await open(path, flags);
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

interface DirSync {
  /** A sync that has not started yet: whoever arrives now is covered by it. */
  queued?: Promise<void>;
  running?: Promise<void>;
}

export class BlobPool {
  private readonly dir: string;
  /** Pool files known durable (written and fsynced, or found and fsynced, by this process). */
  private readonly durable = new Set<string>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly madeDirs = new Set<string>();
  private readonly dirSyncs = new Map<string, DirSync>();

  constructor(
    root: string,
    private readonly stagingDir: string,
  ) {
    this.dir = join(root, '.pool');
  }

  /** Makes `target` a durable blob holding `bytes` (whose SHA-256 hex is `sha256`). */
  async put(target: string, targetDir: string, bytes: Buffer, sha256: string): Promise<void> {
    const pooled = join(this.dir, sha256);
    await this.ensurePooled(pooled, bytes);
    await this.ensureDir(targetDir);
    await link(pooled, target);
    await this.syncDir(targetDir);
  }

  private ensurePooled(pooled: string, bytes: Buffer): Promise<void> {
    if (this.durable.has(pooled)) return Promise.resolve();
    let pending = this.writing.get(pooled);
    if (!pending) {
      pending = this.writePooled(pooled, bytes).finally(() => this.writing.delete(pooled));
      this.writing.set(pooled, pending);
    }
    return pending;
  }

  private async writePooled(pooled: string, bytes: Buffer): Promise<void> {
    const found = await stat(pooled).catch(() => undefined);
    if (found?.isFile() && found.size === bytes.length) {
      // Left by an earlier run: make sure it reached the disk before anything links to it.
      await fsyncPath(pooled);
    } else {
      await this.ensureDir(this.dir);
      const staged = newStagingPath(this.stagingDir);
      try {
        await writeFile(staged, bytes, { flag: 'wx', mode: 0o600 });
        await fsyncPath(staged, 'r+');
        await rename(staged, pooled);
      } finally {
        await rm(staged, { force: true });
      }
      await this.syncDir(this.dir);
    }
    this.durable.add(pooled);
  }

  private async ensureDir(dir: string): Promise<void> {
    if (this.madeDirs.has(dir)) return;
    await mkdir(dir, { recursive: true });
    this.madeDirs.add(dir);
  }

  /** fsync of a directory, shared by everyone who asks before it starts. */
  syncDir(dir: string): Promise<void> {
    let s = this.dirSyncs.get(dir);
    if (!s) {
      s = {};
      this.dirSyncs.set(dir, s);
    }
    if (s.queued) return s.queued;
    const entry = s;
    const queued = (entry.running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        // From here on, new callers need a later sync: their entries may postdate this one.
        entry.queued = undefined;
        const run = fsyncPath(dir);
        entry.running = run;
        return run;
      });
    entry.queued = queued;
    return queued;
  }
}
