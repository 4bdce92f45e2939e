/**
 * The response body of one complete-output page, written straight from the document's bytes.
 * Invariant: the bytes are exactly what the route's response schema serializer writes for the
 * same envelope (same fields, same order, same escaping); test/jobs/output-paging.test.ts compares
 * them with fast-json-stringify on every page of documents full of characters that need escaping.
 *
 * Why not the serializer: a fragment of multi-byte text went Buffer → string (UTF-8 decode) →
 * JSON string escaping → UTF-8 encode on the socket, about a third of the cost of a page.
 *
 * Why only `"` and `\` are escaped: the document is JSON.stringify output, which never holds a
 * control character or a lone surrogate, so those are the only bytes JSON string escaping
 * changes. A fragment ends on a character boundary and every byte of a multi-byte UTF-8
 * character is ≥ 0x80, so escaping bytes is escaping characters.
 */
import type { FastifyRequest } from 'fastify';
import { ok } from '../../http/envelope.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
/** Past this many escapes in one fragment a plain byte loop is cheaper than indexOf + copy per run. */
const SPARSE_ESCAPES = 32;

export interface OutputPageFields {
  jobId: string;
  offsetBytes: number;
  totalBytes: number;
  sha256: string;
  snapshotExpiresAt: string;
  nextCursor: string | null;
}

/** Copies `src` into `dst` at `at` with `"` and `\` escaped; returns the end in `dst`. */
function writeEscaped(src: Buffer, dst: Buffer, at: number): number {
  let from = 0;
  let quote = src.indexOf(QUOTE);
  let backslash = src.indexOf(BACKSLASH);
  for (let found = 0; quote >= 0 || backslash >= 0; found++) {
    const p = backslash < 0 || (quote >= 0 && quote < backslash) ? quote : backslash;
    if (found === SPARSE_ESCAPES) return writeEscapedDense(src, from, dst, at);
    at += src.copy(dst, at, from, p);
    dst[at++] = BACKSLASH;
    dst[at++] = src[p]!;
    from = p + 1;
    if (p === quote) quote = src.indexOf(QUOTE, p + 1);
    else backslash = src.indexOf(BACKSLASH, p + 1);
  }
  return at + src.copy(dst, at, from);
}

function writeEscapedDense(src: Buffer, from: number, dst: Buffer, at: number): number {
  for (let i = from; i < src.length; i++) {
    const c = src[i]!;
    if (c === QUOTE || c === BACKSLASH) dst[at++] = BACKSLASH;
    dst[at++] = c;
  }
  return at;
}

/** The envelope `{success, code, message, data: {jobId, encoding, fragment, …}}` of one page. */
export function outputPageBody(request: FastifyRequest, fields: OutputPageFields, fragment: Buffer): Buffer {
  const { code, message } = ok(request, null);
  const head = `{"success":true,"code":${JSON.stringify(code)},"message":${JSON.stringify(message)},"data":{"jobId":${JSON.stringify(fields.jobId)},"encoding":"json","fragment":"`;
  const tail =
    `","offsetBytes":${fields.offsetBytes},"totalBytes":${fields.totalBytes},"sha256":${JSON.stringify(fields.sha256)}` +
    `,"snapshotExpiresAt":${JSON.stringify(fields.snapshotExpiresAt)},"nextCursor":${fields.nextCursor === null ? 'null' : JSON.stringify(fields.nextCursor)}}}`;
  const headBytes = Buffer.byteLength(head);
  // Room for every fragment byte escaped; the unused end is cut off below.
  const body = Buffer.allocUnsafe(headBytes + 2 * fragment.length + Buffer.byteLength(tail));
  body.write(head, 0);
  let at = writeEscaped(fragment, body, headBytes);
  at += body.write(tail, at);
  return body.subarray(0, at);
}
