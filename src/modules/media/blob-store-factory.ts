/**
 * Opens the blob store MEDIA_STORE names (blob-store.ts is the interface both stores implement).
 * The S3 client is loaded only when it is used.
 */
import type { Config } from '../../config.js';
import type { Keyring } from '../../lib/crypto.js';
import type { BlobStore } from './blob-store.js';

export interface BlobStoreOptions {
  config: Config;
  keyring: Keyring;
}

/** The store MEDIA_STORE names. */
export async function createBlobStore(options: BlobStoreOptions): Promise<BlobStore> {
  const { config } = options;
  if (config.mediaStore === 'local') {
    const { LocalBlobStore } = await import('./local-blob-store.js');
    return LocalBlobStore.create(config, options.keyring);
  }
  const { S3BlobStore } = await import('./s3-blob-store.js');
  return S3BlobStore.create(config);
}
