/**
 * multipart/form-data bodies built byte by byte (not with FormData), so the framing, the part
 * headers and the filename encodings (quoted, RFC 5987 `filename*`, both) can be anything a client
 * could send (test/media/media-fuzz.test.ts).
 */
import { randomBytes } from 'node:crypto';

// ---------------------------------------------------------------------------------------------
// Multipart bodies, built by hand

export type HeaderLine = string | Buffer;

export interface Part {
  headers: HeaderLine[];
  body: Buffer;
}

interface Framing {
  preamble?: Buffer;
  epilogue?: Buffer;
  /** Omit the closing delimiter entirely. */
  noClose?: boolean;
  /** The closing delimiter without its CRLF (RFC 2046 allows it). */
  closeWithoutCrlf?: boolean;
  /** LF instead of CRLF everywhere (not multipart). */
  lfOnly?: boolean;
}

export function encodeMultipart(parts: Part[], boundary: string, f: Framing = {}): Buffer {
  const eol = f.lfOnly ? '\n' : '\r\n';
  const chunks: Buffer[] = [];
  if (f.preamble) chunks.push(f.preamble, Buffer.from(eol));
  parts.forEach((part, i) => {
    chunks.push(Buffer.from(`${i === 0 ? '' : eol}--${boundary}${eol}`, 'latin1'));
    for (const h of part.headers) chunks.push(typeof h === 'string' ? Buffer.from(h, 'utf8') : h, Buffer.from(eol));
    chunks.push(Buffer.from(eol), part.body);
  });
  if (!f.noClose) {
    chunks.push(Buffer.from(`${parts.length === 0 ? '' : eol}--${boundary}--${f.closeWithoutCrlf ? '' : eol}`, 'latin1'));
    if (f.epilogue) chunks.push(f.epilogue);
  }
  return Buffer.concat(chunks);
}

/**
 * How the filename travels: a quoted `filename` parameter (backslash and quote escaped, UTF-8
 * bytes raw), an RFC 5987 `filename*` (UTF-8 or ISO-8859-1, percent-encoded), or both (a plain
 * FALLBACK_FILENAME and the real one as `filename*`).
 */
export type FilenameEncoding = 'quoted' | 'ext-utf8' | 'ext-latin1' | 'both';
export const FALLBACK_FILENAME = 'fallback.bin';

/** RFC 5987 ext-value: attr-chars stay, every other byte is %XX. */
function pctEncode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9!#$&+.^_`|~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

export function dispositionHeader(field: string, filename: string | undefined, encoding: FilenameEncoding = 'quoted'): string {
  let value = `form-data; name="${field}"`;
  if (filename === undefined) return `Content-Disposition: ${value}`;
  const quoted = `filename="${filename.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  if (encoding === 'quoted') value += `; ${quoted}`;
  else if (encoding === 'ext-utf8') value += `; filename*=UTF-8''${pctEncode(Buffer.from(filename, 'utf8'))}`;
  else if (encoding === 'ext-latin1') value += `; filename*=ISO-8859-1''${pctEncode(Buffer.from(filename, 'latin1'))}`;
  else value += `; filename="${FALLBACK_FILENAME}"; filename*=UTF-8''${pctEncode(Buffer.from(filename, 'utf8'))}`;
  return `Content-Disposition: ${value}`;
}

export function filePart(bytes: Buffer, declared: string | undefined, filename: string | undefined, encoding: FilenameEncoding = 'quoted', field = 'file'): Part {
  const headers: HeaderLine[] = [dispositionHeader(field, filename, encoding)];
  if (declared !== undefined) headers.push(`Content-Type: ${declared}`);
  return { headers, body: bytes };
}

export function newBoundary(): string {
  return `----fuzz-${randomBytes(12).toString('hex')}`;
}
