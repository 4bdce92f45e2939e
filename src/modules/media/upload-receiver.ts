/**
 * Receives POST /v1/media/upload: multipart/form-data with exactly one part, a file named `file`.
 * The part streams through a SHA-256 and byte counter into a staging file (memory stays flat
 * whatever the size); more than the plan's largest upload stops it with 413. Any other part, a
 * second file, or no file part at all is 400 INVALID_REQUEST. Whatever happens, a refused
 * request leaves no staging file behind.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyRequest } from 'fastify';
import type { MultipartFile } from '@fastify/multipart';
import { AppError, isAppError } from '../../http/errors.js';
import { MULTIPART_OVERHEAD_BYTES } from './limits.js';
import { newStagingPath } from './staging.js';

export interface StagedUpload {
  path: string;
  sizeBytes: number;
  sha256: string;
  fileName: string | undefined;
  declaredMimeType: string | undefined;
}

function tooLarge(maxBytes: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', {
    message: `The file is larger than the ${Math.floor(maxBytes / (1024 * 1024))} MiB this workspace's plan allows per upload.`,
    details: { maxBytes },
  });
}

function onePart(message: string): AppError {
  return new AppError('INVALID_REQUEST', { message, details: { expected: 'multipart/form-data with exactly one file part named "file"' } });
}

/**
 * Multipart parser failures as our error model; disk and other internal errors pass through (a
 * full disk, ENOSPC or EDQUOT, is answered 507 STORAGE_FULL by the error handler).
 */
function mapError(err: unknown, maxBytes: number): unknown {
  if (isAppError(err)) return err;
  const e = err as { code?: string; syscall?: string };
  if (e.code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(maxBytes);
  if (e.syscall !== undefined) return err;
  if (typeof e.code === 'string' && /LIMIT/.test(e.code)) return onePart('Only one part, a file named "file", is accepted.');
  return onePart('The multipart body is malformed or incomplete.');
}

/** Resolves once `stream` has released its file (destroying it first if it is still open). */
function closed(stream: WriteStream): Promise<void> {
  if (stream.closed) return Promise.resolve();
  return new Promise((resolve) => {
    stream.once('close', () => resolve());
    stream.destroy();
  });
}

async function stagePart(part: MultipartFile, stagingDir: string, maxBytes: number): Promise<StagedUpload> {
  const path = newStagingPath(stagingDir);
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      size += chunk.length;
      if (size > maxBytes) return callback(tooLarge(maxBytes));
      hash.update(chunk);
      callback(null, chunk);
    },
  });
  const out = createWriteStream(path, { flags: 'wx', mode: 0o600 });
  try {
    await pipeline(part.file, meter, out);
    if (part.file.truncated) throw tooLarge(maxBytes);
  } catch (err) {
    // pipeline rejects on the first error without waiting for the file stream to close, and that
    // stream opens its file asynchronously: removing the path before the open completes would
    // leave the file behind (a request body cut short early in the part did so). Wait for it.
    await closed(out);
    await rm(path, { force: true });
    throw err;
  }
  return { path, sizeBytes: size, sha256: hash.digest('hex'), fileName: part.filename, declaredMimeType: part.mimetype };
}

/** Streams the one `file` part of the request into the staging directory. */
export async function receiveUpload(request: FastifyRequest, stagingDir: string, maxBytes: number): Promise<StagedUpload> {
  if (!request.isMultipart()) throw onePart('Send multipart/form-data with one file part named "file".');
  const declaredLength = Number(request.headers['content-length']);
  if (Number.isFinite(declaredLength) && declaredLength > maxBytes + MULTIPART_OVERHEAD_BYTES) throw tooLarge(maxBytes);
  let staged: StagedUpload | undefined;
  try {
    // `parts: 1`: busboy counts every part but silently skips one without a form-data
    // Content-Disposition, so a limit of 2 let such a part ride along with the file unseen (and the
    // upload be stored). With 1, any second part, whatever its headers, fails with a parts limit.
    const parts = request.parts({
      limits: { fileSize: maxBytes, files: 2, fields: 1, parts: 1, fieldNameSize: 100, fieldSize: 1024, headerPairs: 64 },
    });
    for await (const part of parts) {
      if (part.type !== 'file' || part.fieldname !== 'file') throw onePart('Only one part, a file named "file", is accepted.');
      if (staged) throw onePart('Only one file part is accepted.');
      staged = await stagePart(part, stagingDir, maxBytes);
    }
  } catch (err) {
    if (staged) await rm(staged.path, { force: true });
    throw mapError(err, maxBytes);
  }
  // The multipart parser skips a part whose filename holds a line break (possible only in an
  // RFC 5987 filename*): such a request has no readable file part either.
  if (!staged) throw onePart('The request has no file part named "file" (a part whose filename holds a line break is not read).');
  return staged;
}
