/**
 * Files a provider returns: downloaded (from the provider's own origin with its client and key, or
 * else under the public-address rule with no credentials), bounded in size, and checked by the same
 * content inspection as uploads; a file that is not of the kind the operation produces, or not an
 * accepted format, fails the job with PROVIDER_ERROR.
 */
import { AppError } from '../http/errors.js';
import type { MediaKind } from '../operations/contract.js';
import { fileType, formatForDetected } from '../modules/media/formats.js';
import { inspectUpload } from '../modules/media/inspect.js';
import { callProvider, type RetryPolicy } from './http.js';
import type { AdapterContext } from './types.js';
import { ProviderError, type ProducedFile } from './types.js';

/** Largest file accepted from a provider. */
export const MAX_PROVIDER_FILE_BYTES = 256 * 1024 * 1024;

/**
 * Identifies `bytes` by content and checks them like an upload; returns the file to store.
 * `expected` is the kind the operation produces (an image operation never stores audio).
 */
export async function checkProviderFile(bytes: Buffer, expected: MediaKind, field: string, baseName: string, index?: number): Promise<ProducedFile> {
  const format = formatForDetected(await (await fileType()).fileTypeFromBuffer(bytes));
  if (!format || format.kind !== expected) {
    throw new ProviderError('PROVIDER_ERROR', `The provider returned a file that is not ${article(expected)} ${expected} of an accepted format.`);
  }
  // Checked where it is, in memory: staging it in a temporary file first cost a directory, a
  // write and a read of the whole file per result (about 5 ms of a 2.4 MB speech result).
  try {
    await inspectUpload(bytes, format.mimeType);
  } catch (err) {
    if (err instanceof AppError) throw new ProviderError('PROVIDER_ERROR', `The provider returned an unusable file: ${err.message}`);
    throw err;
  }
  return { field, ...(index !== undefined ? { index } : {}), name: `${baseName}.${format.extension}`, mimeType: format.mimeType, bytes };
}

function article(kind: string): string {
  return /^[aeiou]/.test(kind) ? 'an' : 'a';
}

/**
 * Downloads a file the provider handed out by URL. Its own origin is fetched with its client and
 * `headers` (the key); any other origin through the public client, without credentials.
 */
export async function downloadProviderFile(
  ctx: AdapterContext,
  providerBaseUrl: string,
  url: string,
  o: { headers?: Record<string, string>; signal: AbortSignal; timeoutMs: number; policy: RetryPolicy },
): Promise<Buffer> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new ProviderError('PROVIDER_ERROR', 'The provider returned a file address that is not a URL.');
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new ProviderError('PROVIDER_ERROR', 'The provider returned a file address that is not http(s).');
  const own = target.origin === new URL(providerBaseUrl).origin;
  const res = await callProvider(
    own ? ctx.providerEgress : ctx.egress,
    target.href,
    { method: 'GET', ...(own && o.headers ? { headers: o.headers } : {}), signal: o.signal, timeoutMs: o.timeoutMs, maxBytes: MAX_PROVIDER_FILE_BYTES },
    o.policy,
  );
  return res.body;
}

/** The image made exactly `width` × `height`: scaled to cover it and cropped at the centre (PNG). */
export async function coverResize(bytes: Buffer, width: number, height: number): Promise<Buffer> {
  const { default: sharp } = await import('sharp');
  try {
    return await sharp(bytes).resize(width, height, { fit: 'cover', position: 'centre' }).png().toBuffer();
  } catch {
    throw new ProviderError('PROVIDER_ERROR', 'The provider returned an image that cannot be resized.');
  }
}
