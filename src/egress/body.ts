/**
 * Response body reader for the egress client.
 *
 * Invariant: at most `maxBytes` *decoded* bytes are ever buffered. Content-Encoding layers
 * (gzip / x-gzip / deflate / br, possibly stacked) are undone with node:zlib streams and the cap is
 * counted after decoding, so a small compressed body that inflates past the cap (decompression bomb)
 * fails with EGRESS_TOO_LARGE while the pipeline is torn down — it is never inflated in full.
 * A declared Content-Length above the cap fails before reading anything.
 */
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';
import zlib from 'node:zlib';
import { EgressError } from './types.js';

/** Most Content-Encoding layers we are willing to undo (more is almost certainly hostile). */
const MAX_ENCODING_LAYERS = 2;

/**
 * HTTP "deflate" is meant to be zlib-wrapped (RFC 9110) but some servers send raw deflate.
 * Picks the right inflater from the first byte, like browsers do.
 */
class DeflateAutoDecoder extends Transform {
  private inner: zlib.Inflate | zlib.InflateRaw | null = null;

  private ensureInner(first: number | undefined): zlib.Inflate | zlib.InflateRaw {
    if (this.inner) return this.inner;
    // A zlib header has CM = 8 in its low nibble; raw deflate blocks do not start that way in practice.
    const inner = first !== undefined && (first & 0x0f) === 0x08 ? zlib.createInflate() : zlib.createInflateRaw();
    inner.on('data', (chunk: Buffer) => {
      if (!this.push(chunk)) inner.pause();
    });
    inner.on('error', (err) => this.destroy(err));
    this.inner = inner;
    return inner;
  }

  override _read(size: number): void {
    this.inner?.resume();
    super._read(size);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback): void {
    const inner = this.ensureInner(chunk[0]);
    inner.write(chunk, () => callback());
  }

  override _flush(callback: TransformCallback): void {
    const inner = this.inner;
    if (!inner) return callback();
    inner.once('end', () => callback());
    inner.end();
  }

  override _destroy(err: Error | null, callback: (error: Error | null) => void): void {
    this.inner?.destroy();
    callback(err);
  }
}

function decoderFor(coding: string): Transform | null {
  switch (coding) {
    case 'gzip':
    case 'x-gzip':
      // Same leniency as browsers for a truncated trailer.
      return zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH });
    case 'deflate':
      return new DeflateAutoDecoder();
    case 'br':
      return zlib.createBrotliDecompress({ finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
    default:
      return null;
  }
}

/**
 * Builds the decoder chain for a Content-Encoding header value. Returns `[]` for identity.
 * Throws EGRESS_NETWORK for an encoding we did not ask for and cannot decode.
 */
export function decodersFor(contentEncoding: string | string[] | undefined): Transform[] {
  const header = Array.isArray(contentEncoding) ? contentEncoding.join(',') : (contentEncoding ?? '');
  const codings = header
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity');
  if (codings.length > MAX_ENCODING_LAYERS) {
    throw new EgressError('EGRESS_NETWORK', `too many content-encoding layers (${codings.length})`);
  }
  // Codings are listed in the order they were applied, so undo them back to front.
  return codings.reverse().map((coding) => {
    const decoder = decoderFor(coding);
    if (!decoder) throw new EgressError('EGRESS_NETWORK', `unsupported content-encoding "${coding}"`);
    return decoder;
  });
}

export function tooLarge(maxBytes: number): EgressError {
  return new EgressError('EGRESS_TOO_LARGE', `response body exceeds ${maxBytes} bytes`);
}

/** Throws EGRESS_TOO_LARGE when a declared Content-Length is already above the cap. */
export function checkDeclaredLength(contentLength: string | string[] | undefined, maxBytes: number): void {
  const value = Array.isArray(contentLength) ? contentLength[0] : contentLength;
  if (value === undefined || !/^\d+$/.test(value.trim())) return;
  if (Number(value.trim()) > maxBytes) throw tooLarge(maxBytes);
}

/** The request's abort as the body reader takes it: its state, and a real AbortSignal when a pipeline needs one. */
export interface BodyAbort {
  readonly aborted: boolean;
  readonly reason: unknown;
  toAbortSignal(): AbortSignal;
}

/**
 * Reads `source` through the decoders into one Buffer, refusing more than `maxBytes` decoded bytes.
 * On any failure every stream in the chain is destroyed (this also releases the connection).
 * An AbortSignal is made from `abort` only for the decoders' pipeline: a plain body (most provider
 * answers) needs none, and making one (a controller and a listener per call) was a measurable
 * share of a small provider call. With `sink`, each decoded chunk goes to it as it arrives
 * instead (a streamed answer) and the Buffer returned is empty.
 */
export async function readCappedBody(
  source: Readable,
  decoders: Transform[],
  maxBytes: number,
  abort: BodyAbort,
  sink?: (chunk: Buffer) => void,
): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  // pipeline() may report its own AbortError instead of the error our consumer threw (it tears the
  // other stages down first), so the consumer's verdict is kept here and wins.
  let verdict: EgressError | undefined;
  const collect = async (input: AsyncIterable<Buffer | string>): Promise<void> => {
    for await (const chunk of input) {
      const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      total += buf.length;
      if (total > maxBytes) {
        verdict = tooLarge(maxBytes);
        throw verdict;
      }
      if (sink) sink(buf);
      else chunks.push(buf);
    }
  };
  const [first, second] = decoders;
  if (decoders.length > MAX_ENCODING_LAYERS) throw new EgressError('EGRESS_NETWORK', 'too many content-encoding layers');
  if (!first) {
    // Nothing to decode: read the body directly. (pipeline() allocates an AbortError with its stack
    // on every finish, a measurable share of a small provider call.) The request's own signal
    // already ends the body stream on abort or deadline.
    try {
      if (abort.aborted) throw abort.reason ?? new DOMException('This operation was aborted', 'AbortError');
      await collect(source);
    } catch (err) {
      if (!source.destroyed) source.destroy();
      throw verdict ?? err;
    }
    return sink ? Buffer.alloc(0) : Buffer.concat(chunks, total);
  }
  const signal = abort.toAbortSignal();
  try {
    if (first && second) await pipeline(source, first, second, collect, { signal });
    else if (first) await pipeline(source, first, collect, { signal });
    else await pipeline(source, collect, { signal });
  } catch (err) {
    throw verdict ?? err;
  }
  return sink ? Buffer.alloc(0) : Buffer.concat(chunks, total);
}
