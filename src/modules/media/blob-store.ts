/**
 * Where media bytes live, behind one interface: the local filesystem under DATA_DIR (default) or
 * an S3-compatible bucket (MEDIA_STORE=s3://bucket/prefix, S3_ENDPOINT, credentials and region
 * from the standard AWS environment). Uploads are staged in a local directory first, checked,
 * and only then committed with `putFile`; a blob is durable when `put*` resolves.
 *
 * Keys are `<workspaceId>/<mediaId>`, both UUIDs, so a key can never name a path outside the
 * store.
 */
import type { Readable } from 'node:stream';
import { AppError } from '../../http/errors.js';

export interface BlobMeta {
  mimeType: string;
  sizeBytes: number;
  /** Hex SHA-256 of the bytes, when the caller has it already. */
  sha256?: string;
}

export interface BlobRef {
  workspaceId: string;
  id: string;
  key: string;
}

export interface BlobStore {
  readonly kind: 'local' | 's3';
  /** A local directory for staging uploads (on the same filesystem as local blobs). */
  readonly stagingDir: string;
  /** Commits a staged file as blob `key` (the staged file is moved or copied; the caller removes leftovers). */
  putFile(key: string, stagedPath: string, meta: BlobMeta): Promise<void>;
  putBytes(key: string, bytes: Buffer, meta: BlobMeta): Promise<void>;
  /** Removes a blob; a missing one is not an error. */
  delete(key: string): Promise<void>;
  /** The stored size, or undefined when there is no such blob. */
  stat(key: string): Promise<number | undefined>;
  /** Bytes `start`..`end` (inclusive) of a blob. */
  read(key: string, range?: { start: number; end: number }): Promise<Readable>;
  /** Files currently in the staging directory (uploads in progress). */
  stagedFiles(): Promise<string[]>;
  /** Every key under `prefix` (operators and tests: orphan checks). */
  listKeys(prefix: string): Promise<string[]>;
  /**
   * A download URL that works without an API key until `signingTimeMs + ttlSeconds`; the same
   * arguments always give the same URL.
   */
  signedUrl(ref: BlobRef, signingTimeMs: number, ttlSeconds: number): Promise<string>;
  close(): Promise<void>;
}

const UUID = '[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}';
const KEY_RE = new RegExp(`^${UUID}/${UUID}$`);

export function storageKeyFor(workspaceId: string, mediaId: string): string {
  const key = `${workspaceId.toLowerCase()}/${mediaId.toLowerCase()}`;
  assertKey(key);
  return key;
}

export function assertKey(key: string): void {
  if (!KEY_RE.test(key)) throw new AppError('INTERNAL', { message: 'invalid media storage key' });
}
