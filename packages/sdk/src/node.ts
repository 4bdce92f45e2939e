/**
 * The Node.js entry: everything of the core, with SHA-256 from node:crypto (incremental, so
 * large outputs and uploads are hashed as they stream) and uploads from a file path.
 */
import { createHash } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { basename } from 'node:path';
import { createClient as createCoreClient, type ClientOptions } from './client.js';
import type { Sha256Factory } from './hash.js';
import { mimeTypeFromName, type UploadOptions, type UploadSource } from './upload.js';

export * from './index.js';

/** SHA-256 with node:crypto. */
export const nodeSha256: Sha256Factory = () => {
  const hash = createHash('sha256');
  return {
    update(data) {
      if (typeof data === 'string') {
        hash.update(data, 'utf8');
        return Buffer.byteLength(data, 'utf8');
      }
      hash.update(data);
      return data.byteLength;
    },
    hex: async () => hash.digest('hex'),
  };
};

/** A file on disk as a Blob read lazily (its name and type come from the path). */
export async function fileFromPath(path: string, type?: string): Promise<File> {
  const blob = await openAsBlob(path, { type: type ?? mimeTypeFromName(path) ?? '' });
  return new File([blob], basename(path), { type: blob.type });
}

export function createClient(options: ClientOptions) {
  const client = createCoreClient({ sha256: nodeSha256, ...options });
  const upload = client.media.upload;
  return {
    ...client,
    media: {
      ...client.media,
      /** Uploads a file path, Buffer, Blob or stream and checks the stored sha256. */
      upload: async (source: UploadSource | string, o: UploadOptions = {}) =>
        upload(typeof source === 'string' ? await fileFromPath(source, o.mimeType) : source, o),
    },
  };
}

export type NodeClient = ReturnType<typeof createClient>;
