/**
 * Character-encoding and content-type sniffing for link previews.
 *
 * Invariant: `detectEncoding` always returns an encoding name that `new TextDecoder(name)` accepts
 * (an unknown or unsupported label is never returned; the last resort is "utf-8"), and none of the
 * functions here throws, whatever bytes or header text they are given.
 */
import { Parser } from 'htmlparser2';

/** How many leading bytes are searched for a `<meta charset>` declaration. */
const PRESCAN_BYTES = 4096;

/** The canonical TextDecoder name for a label, or null when the runtime does not know the label. */
export function supportedEncoding(label: string | undefined | null): string | null {
  if (typeof label !== 'string') return null;
  const cleaned = label.trim().replace(/^["']|["']$/g, '').trim();
  if (cleaned === '' || cleaned.length > 64) return null;
  try {
    return new TextDecoder(cleaned).encoding;
  } catch {
    // WHATWG maps x-user-defined to a byte-preserving decoder Node lacks; windows-1252 is closest.
    return cleaned.toLowerCase() === 'x-user-defined' ? 'windows-1252' : null;
  }
}

/** Splits a Content-Type value into its lower-cased essence ("text/html") and its charset label. */
export function parseContentType(value: string | undefined): { essence: string; charset: string | null } {
  if (typeof value !== 'string') return { essence: '', charset: null };
  const [type = '', ...params] = value.split(';');
  let charset: string | null = null;
  for (const param of params) {
    const eq = param.indexOf('=');
    if (eq < 0) continue;
    if (param.slice(0, eq).trim().toLowerCase() === 'charset') {
      charset = param.slice(eq + 1).trim().replace(/^"|"$/g, '');
      break;
    }
  }
  return { essence: type.trim().toLowerCase(), charset };
}

/** The label in a `content="text/html; charset=…"` value (the HTML "extract from meta" rule, simplified). */
function charsetFromMetaContent(content: string): string | null {
  const match = /charset\s*=\s*["']?([^"';\s]+)/i.exec(content);
  return match?.[1] ?? null;
}

function encodingFromBom(bytes: Uint8Array): string | null {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) return 'utf-8';
  if (bytes.length >= 2 && bytes[0] === 0xfe && bytes[1] === 0xff) return 'utf-16be';
  if (bytes.length >= 2 && bytes[0] === 0xff && bytes[1] === 0xfe) return 'utf-16le';
  return null;
}

/**
 * Looks for `<meta charset>` / `<meta http-equiv="content-type" content="…charset=…">` in the first
 * bytes. The bytes are read as latin1, which keeps every ASCII byte in place whatever the real
 * encoding, and scanned with the HTML tokenizer (so comments and scripts are skipped properly).
 */
function encodingFromMeta(bytes: Uint8Array): string | null {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, PRESCAN_BYTES)).toString('latin1');
  let found: string | null = null;
  const parser = new Parser({
    onopentag(name, attribs) {
      if (found !== null || name !== 'meta') return;
      const declared = Object.hasOwn(attribs, 'charset')
        ? attribs.charset
        : (attribs['http-equiv'] ?? '').trim().toLowerCase() === 'content-type'
          ? charsetFromMetaContent(attribs.content ?? '')
          : null;
      const encoding = supportedEncoding(declared);
      if (encoding === null) return;
      // A document that could be read as ASCII to find this tag is not UTF-16 (HTML standard rule).
      found = encoding.startsWith('utf-16') ? 'utf-8' : encoding;
    },
  });
  parser.write(head);
  parser.end();
  return found;
}

/**
 * The encoding a page's bytes are decoded with: a byte-order mark (unambiguous, so it wins, as in
 * the HTML standard), else a supported `charset=` of the Content-Type header, else a `<meta>`
 * declaration near the start, else UTF-8.
 */
export function detectEncoding(bytes: Uint8Array, contentType?: string): string {
  return (
    encodingFromBom(bytes) ??
    supportedEncoding(parseContentType(contentType).charset) ??
    encodingFromMeta(bytes) ??
    'utf-8'
  );
}

/**
 * What windows-1252 bytes 0x80–0x9F mean (WHATWG Encoding index). Node ≥ 20.18.3 decodes
 * windows-1252 (and so latin1 / iso-8859-1, its aliases) as plain latin1, leaving these bytes as
 * C1 controls (nodejs/node#60888); `fixWindows1252` repairs that, and is a no-op on a fixed runtime.
 */
const WINDOWS_1252_C1 = [
  0x20ac, 0x81, 0x201a, 0x192, 0x201e, 0x2026, 0x2020, 0x2021, 0x2c6, 0x2030, 0x160, 0x2039, 0x152, 0x8d, 0x17d, 0x8f,
  0x90, 0x2018, 0x2019, 0x201c, 0x201d, 0x2022, 0x2013, 0x2014, 0x2dc, 0x2122, 0x161, 0x203a, 0x153, 0x9d, 0x17e, 0x178,
];

function fixWindows1252(text: string): string {
  return text.replace(/[\u0080-\u009f]/g, (ch) => String.fromCharCode(WINDOWS_1252_C1[ch.charCodeAt(0) - 0x80]!));
}

/** Decodes bytes with the detected encoding; malformed sequences become U+FFFD, a BOM is dropped. */
export function decodeHtml(bytes: Uint8Array, contentType?: string): string {
  const encoding = detectEncoding(bytes, contentType);
  const text = new TextDecoder(encoding).decode(bytes);
  return encoding === 'windows-1252' ? fixWindows1252(text) : text;
}

/** True when the bytes start like a common raster image (for answers without a Content-Type). */
export function looksLikeImage(bytes: Uint8Array): boolean {
  const starts = (...sig: number[]): boolean => sig.every((b, i) => bytes[i] === b);
  return (
    starts(0x89, 0x50, 0x4e, 0x47) || // PNG
    starts(0xff, 0xd8, 0xff) || // JPEG
    starts(0x47, 0x49, 0x46, 0x38) || // GIF8
    (starts(0x52, 0x49, 0x46, 0x46) && bytes[8] === 0x57 && bytes[9] === 0x45 && bytes[10] === 0x42 && bytes[11] === 0x50) // RIFF….WEBP
  );
}
