/**
 * Media blobs as files under DATA_DIR/media/<workspaceId>/<mediaId>. Writes are atomic: bytes go
 * to a staging file in DATA_DIR/media/.staging (same filesystem), are fsynced, renamed into place
 * and the directory is fsynced, so a crash leaves either the whole blob or none. Bytes produced
 * in memory (job results) are hard links to one pooled copy per content (blob-pool.ts).
 */
import { mkdirSync } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Config } from '../../config.js';
import type { Keyring } from '../../lib/crypto.js';
import { assertKey, type BlobMeta, type BlobRef, type BlobStore } from './blob-store.js';
import { localDownloadUrl } from './signing.js';
import { listStaged, sweepStaleStaging } from './staging.js';
import { BlobPool, fsyncPath } from './blob-pool.js';
import { sha256Hex } from '../../lib/crypto.js';

/**
 * Read size of a blob stream (a download, a job's media input). fs streams read 64 KiB at a
 * time by default: a 2.4 MB file took 37 thread-pool reads and socket writes, each a turn of the
 * event loop, about 13 to 16 ms per download on a busy 2-core machine; at 1 MiB it takes 3, about
 * 8 to 10 ms. The cost is one buffer of up to this size per stream being read.
 */
const READ_CHUNK_BYTES = 1024 * 1024;

export class LocalBlobStore implements BlobStore {
  readonly kind = 'local' as const;
  readonly stagingDir: string;
  private readonly pool: BlobPool;

  private constructor(
    readonly root: string,
    private readonly baseUrl: string,
    private readonly keyring: Keyring,
  ) {
    this.stagingDir = join(root, '.staging');
    this.pool = new BlobPool(root, this.stagingDir);
  }

  static create(config: Config, keyring: Keyring): LocalBlobStore {
    const store = new LocalBlobStore(join(config.dataDir, 'media'), config.publicBaseUrl, keyring);
    mkdirSync(store.stagingDir, { recursive: true, mode: 0o700 });
    void sweepStaleStaging(store.stagingDir);
    return store;
  }

  private path(key: string): string {
    assertKey(key);
    return join(this.root, key);
  }

  async putFile(key: string, stagedPath: string): Promise<void> {
    const target = this.path(key);
    await fsyncPath(stagedPath, 'r+');
    await mkdir(join(target, '..'), { recursive: true });
    await rename(stagedPath, target);
    await this.pool.syncDir(join(target, '..'));
  }

  async putBytes(key: string, bytes: Buffer, meta: BlobMeta): Promise<void> {
    const target = this.path(key);
    await this.pool.put(target, join(target, '..'), bytes, meta.sha256 ?? sha256Hex(bytes));
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }

  async stat(key: string): Promise<number | undefined> {
    try {
      const s = await stat(this.path(key));
      return s.isFile() ? s.size : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    // Opened here so a missing file fails now rather than on the response stream.
    const handle = await open(this.path(key), 'r');
    return handle.createReadStream({ highWaterMark: READ_CHUNK_BYTES, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  async listKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let workspaces: string[];
    try {
      workspaces = await readdir(this.root);
    } catch {
      return [];
    }
    for (const ws of workspaces) {
      if (ws.startsWith('.')) continue;
      const files = await readdir(join(this.root, ws)).catch(() => [] as string[]);
      for (const f of files) if (`${ws}/${f}`.startsWith(prefix)) keys.push(`${ws}/${f}`);
    }
    return keys.sort();
  }

  async signedUrl(ref: BlobRef, signingTimeMs: number, ttlSeconds: number): Promise<string> {
    return localDownloadUrl(this.baseUrl, this.keyring, ref.workspaceId, ref.id, signingTimeMs + ttlSeconds * 1000);
  }

  async stagedFiles(): Promise<string[]> {
    return listStaged(this.stagingDir);
  }

  async close(): Promise<void> {}
}
