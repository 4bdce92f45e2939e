/**
 * The complete-output protocol (spec Rule 6): pages in order, each offsetBytes equal to the bytes
 * read so far, the digest and total constant across pages, the sum equal to totalBytes and the
 * SHA-256 of the joined text equal to sha256; then one JSON.parse. A changed result (409
 * OUTPUT_CHANGED, or a page naming another digest) and an expired cursor (410 CURSOR_EXPIRED)
 * restart the read from the first page, discarding what was read.
 *
 * Fragments end on character boundaries, so the document's text is the fragments joined as
 * strings; the bytes are only counted and hashed.
 */
import { IntegrityError, ServiceError } from './errors.js';
import type { Sha256Factory } from './hash.js';
import type { Transport } from './transport.js';
import type { OutputPage } from './types.js';

export interface OutputReadOptions {
  signal?: AbortSignal;
  /** Restarts allowed after OUTPUT_CHANGED or CURSOR_EXPIRED before giving up (default 5). */
  maxRestarts?: number;
  /** Called after every page (bytes read so far, total). */
  onPage?: (readBytes: number, totalBytes: number) => void;
}

export interface OutputDocument<T = unknown> {
  result: T;
  /** The JSON text exactly as served. */
  text: string;
  sha256: string;
  totalBytes: number;
  pages: number;
  /** How many times the read started again. */
  restarts: number;
}

class Restart extends Error {}

export async function readOutputDocument<T>(transport: Transport, sha256: Sha256Factory, jobId: string, options: OutputReadOptions = {}): Promise<OutputDocument<T>> {
  const maxRestarts = options.maxRestarts ?? 5;
  const path = `/v1/jobs/${encodeURIComponent(jobId)}/output`;
  let pages = 0;
  for (let restarts = 0; ; restarts++) {
    try {
      const doc = await readOnce(transport, sha256, path, options, () => pages++);
      return { ...doc, result: JSON.parse(doc.text) as T, pages, restarts };
    } catch (err) {
      const restart = err instanceof Restart || (err instanceof ServiceError && (err.code === 'OUTPUT_CHANGED' || err.code === 'CURSOR_EXPIRED'));
      if (!restart || restarts >= maxRestarts) {
        if (err instanceof Restart) throw new IntegrityError(`the output kept changing (${restarts + 1} reads)`);
        throw err;
      }
    }
  }
}

async function readOnce(transport: Transport, sha256: Sha256Factory, path: string, options: OutputReadOptions, countPage: () => void) {
  const hasher = sha256();
  const parts: string[] = [];
  let size = 0;
  let digest: string | undefined;
  let total = 0;
  let cursor: string | null | undefined;
  do {
    const { data: page } = await transport.json<OutputPage>({ method: 'GET', path, query: cursor ? { cursor } : undefined, signal: options.signal, retry: true });
    countPage();
    if (digest !== undefined && (page.sha256 !== digest || page.totalBytes !== total)) throw new Restart();
    if (page.offsetBytes !== size) throw new IntegrityError(`page at offsetBytes ${page.offsetBytes}, but ${size} bytes were read`, size, page.offsetBytes);
    digest = page.sha256;
    total = page.totalBytes;
    size += hasher.update(page.fragment);
    parts.push(page.fragment);
    options.onPage?.(size, total);
    cursor = page.nextCursor;
  } while (cursor);
  if (size !== total) throw new IntegrityError(`read ${size} bytes, totalBytes is ${total}`, total, size);
  const actual = await hasher.hex();
  if (actual !== digest) throw new IntegrityError('the SHA-256 of the joined output differs from sha256', digest, actual);
  return { text: parts.length === 1 ? parts[0]! : parts.join(''), sha256: actual, totalBytes: total };
}
