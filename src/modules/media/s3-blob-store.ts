/**
 * Media blobs in an S3-compatible bucket: MEDIA_STORE=s3://bucket/prefix, S3_ENDPOINT for a
 * non-AWS server (path-style addressing), credentials from the AWS SDK's standard chain
 * (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, profiles, instance roles), the region from
 * config.s3Region (AWS_REGION, else AWS_DEFAULT_REGION, else us-east-1; read in config.ts).
 * Uploads are staged on local disk under DATA_DIR/media-staging and streamed to the bucket only
 * after they pass every check, so a refused upload never reaches the bucket. Downloads are
 * presigned GET URLs: the bucket itself enforces signature and expiry.
 *
 * Checksums are sent only where S3 requires them: the SDK's default trailing CRC32 uses
 * aws-chunked uploads that many S3-compatible servers reject.
 */
import { createReadStream, mkdirSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import type { Config } from '../../config.js';
import { assertKey, type BlobMeta, type BlobRef, type BlobStore } from './blob-store.js';
import { listStaged, sweepStaleStaging } from './staging.js';

/** S3 refuses presigned URLs that live longer than seven days. */
const MAX_PRESIGN_SECONDS = 604_800;

export class S3BlobStore implements BlobStore {
  readonly kind = 's3' as const;

  private constructor(
    private readonly client: S3Client,
    private readonly bucket: string,
    private readonly prefix: string,
    readonly stagingDir: string,
  ) {}

  static create(config: Config): S3BlobStore {
    const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(config.mediaStore);
    if (!m) throw new Error(`MEDIA_STORE is not an s3:// URL: ${config.mediaStore}`);
    const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
    const client = new S3Client({
      region: config.s3Region,
      ...(config.s3Endpoint ? { endpoint: config.s3Endpoint, forcePathStyle: true } : {}),
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
    const stagingDir = join(config.dataDir, 'media-staging');
    mkdirSync(stagingDir, { recursive: true, mode: 0o700 });
    void sweepStaleStaging(stagingDir);
    return new S3BlobStore(client, m[1]!, prefix, stagingDir);
  }

  private objectKey(key: string): string {
    assertKey(key);
    return this.prefix ? `${this.prefix}/${key}` : key;
  }

  async putFile(key: string, stagedPath: string, meta: BlobMeta): Promise<void> {
    const size = (await stat(stagedPath)).size;
    await this.client.send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: this.objectKey(key),
        Body: createReadStream(stagedPath),
        ContentLength: size,
        ContentType: meta.mimeType,
      }),
    );
  }

  async putBytes(key: string, bytes: Buffer, meta: BlobMeta): Promise<void> {
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), Body: bytes, ContentLength: bytes.length, ContentType: meta.mimeType }),
    );
  }

  async delete(key: string): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
  }

  async stat(key: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key) }));
      return head.ContentLength;
    } catch (err) {
      const status = (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
      if (status === 404) return undefined;
      throw err;
    }
  }

  async read(key: string, range?: { start: number; end: number }): Promise<Readable> {
    const out = await this.client.send(
      new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(key), ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
    );
    return out.Body as Readable;
  }

  async listKeys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    const base = this.prefix ? `${this.prefix}/` : '';
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: `${base}${prefix}`, ...(token ? { ContinuationToken: token } : {}) }),
      );
      for (const o of page.Contents ?? []) if (o.Key) keys.push(o.Key.slice(base.length));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  /**
   * A presigned GET. S3 dates signatures in whole seconds, so a signing time with a millisecond
   * part gets one extra second: the URL works until `signingTimeMs + ttl` and stops within a
   * second after it.
   */
  async signedUrl(ref: BlobRef, signingTimeMs: number, ttlSeconds: number): Promise<string> {
    const expiresIn = Math.min(MAX_PRESIGN_SECONDS, ttlSeconds + (signingTimeMs % 1000 === 0 ? 0 : 1));
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: this.objectKey(ref.key) }), {
      expiresIn,
      signingDate: new Date(signingTimeMs),
    });
  }

  async stagedFiles(): Promise<string[]> {
    return listStaged(this.stagingDir);
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}
