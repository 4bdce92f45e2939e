/**
 * A large answer body for the fakes' oversized-output tests: zero bytes written in 64 KiB chunks,
 * honouring backpressure, until `bytes` are out or the client closes the connection. What was
 * written before the client stopped reading tells whether it kept its memory bound.
 */
import type { ServerResponse } from 'node:http';

export interface StreamedBody {
  bytes: number;
  /** Send the Content-Length first (a declared size), else the body is chunked. */
  declareLength?: boolean;
  contentType?: string;
}

/** Writes the body; resolves with the bytes written when it ended or the connection closed. */
export async function writeStreamedBody(res: ServerResponse, o: StreamedBody): Promise<number> {
  let written = 0;
  res.writeHead(200, { 'content-type': o.contentType ?? 'application/octet-stream', ...(o.declareLength ? { 'content-length': String(o.bytes) } : {}) });
  const chunk = Buffer.alloc(64 * 1024);
  while (written < o.bytes && !res.destroyed) {
    const part = chunk.subarray(0, Math.min(chunk.length, o.bytes - written));
    written += part.length;
    if (!res.write(part)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done);
          res.off('close', done);
          resolve();
        };
        res.on('drain', done);
        res.on('close', done);
      });
    }
  }
  if (!res.destroyed) res.end();
  return written;
}
