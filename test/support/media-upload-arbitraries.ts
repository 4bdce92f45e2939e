/**
 * Generated uploads for test/media/media-fuzz.test.ts and test/media/media-mcp-fuzz.test.ts:
 * contents (random bytes, magic bytes, real files flipped, truncated, padded or cut), declared
 * types, hostile filenames and their encodings, and multipart structures with the answer each must
 * get.
 */
import fc from 'fast-check';
import { MEDIA_FORMATS } from '../../src/modules/media/formats.js';
import { APPENDED_PAYLOADS, MAGICS, REFS, type Ref } from './media-samples.js';
import { encodeMultipart, filePart, type FilenameEncoding, type Part } from './multipart.js';
import { type Sent } from './media-upload-checks.js';

// ---------------------------------------------------------------------------------------------
// Arbitraries

export const refArb = fc.constantFrom(...REFS);
export const bytesArb = (maxLength: number) => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a));

type ContentCase =
  | { kind: 'random'; bytes: Buffer }
  | { kind: 'magic'; bytes: Buffer }
  | { kind: 'empty'; bytes: Buffer }
  | { kind: 'original'; ref: Ref; bytes: Buffer }
  | { kind: 'flipped'; ref: Ref; bytes: Buffer }
  | { kind: 'truncated'; ref: Ref; bytes: Buffer }
  | { kind: 'appended'; ref: Ref; bytes: Buffer }
  | { kind: 'spliced'; ref: Ref; bytes: Buffer };

export const contentArb: fc.Arbitrary<ContentCase> = fc.oneof(
  { weight: 2, arbitrary: bytesArb(2048).map((bytes) => ({ kind: 'random' as const, bytes })) },
  { weight: 3, arbitrary: fc.tuple(fc.constantFrom(...MAGICS), bytesArb(1024)).map(([m, tail]) => ({ kind: 'magic' as const, bytes: Buffer.concat([m, tail]) })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const, bytes: Buffer.alloc(0) }) },
  { weight: 3, arbitrary: refArb.map((ref) => ({ kind: 'original' as const, ref, bytes: ref.bytes })) },
  {
    weight: 4,
    arbitrary: refArb.chain((ref) =>
      fc.array(fc.tuple(fc.nat({ max: ref.bytes.length - 1 }), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 8 }).map((flips) => {
        const bytes = Buffer.from(ref.bytes);
        for (const [at, xor] of flips) bytes[at] = bytes[at]! ^ xor;
        return { kind: 'flipped' as const, ref, bytes };
      }),
    ),
  },
  {
    weight: 3,
    arbitrary: refArb.chain((ref) => fc.integer({ min: 1, max: ref.bytes.length - 1 }).map((n) => ({ kind: 'truncated' as const, ref, bytes: ref.bytes.subarray(0, n) }))),
  },
  {
    weight: 3,
    arbitrary: fc.tuple(refArb, fc.oneof(bytesArb(512).filter((b) => b.length > 0), fc.constantFrom(...APPENDED_PAYLOADS))).map(([ref, junk]) => ({
      kind: 'appended' as const,
      ref,
      bytes: Buffer.concat([ref.bytes, junk]),
    })),
  },
  {
    weight: 2,
    arbitrary: refArb.chain((ref) =>
      fc.tuple(fc.nat({ max: ref.bytes.length - 1 }), fc.integer({ min: 1, max: 64 }), bytesArb(64)).map(([at, cut, insert]) => ({
        kind: 'spliced' as const,
        ref,
        bytes: Buffer.concat([ref.bytes.subarray(0, at), insert, ref.bytes.subarray(Math.min(ref.bytes.length, at + cut))]),
      })),
    ),
  },
);

const ALL_TYPES = [...new Set(Object.values(MEDIA_FORMATS).flatMap((f) => [f.mimeType, ...f.aliases]))];
const OTHER_TYPES = ['application/octet-stream', 'text/html', 'text/plain', 'image/svg+xml', 'application/x-msdownload', 'image/*', 'image/tiff', 'video/quicktime', 'audio/mp4', 'application/zip', 'image', 'image/png/x', ';', 'image/png\u0000'];

/** The declared part type: right, an alias (any case, with parameters), another format's, a foreign one, random, or none. */
export function declaredArb(content: ContentCase): fc.Arbitrary<string | undefined> {
  const ref = 'ref' in content ? content.ref : undefined;
  const right = ref ? [ref.type, ...MEDIA_FORMATS[ref.id].aliases] : ALL_TYPES;
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...right) },
    { weight: 1, arbitrary: fc.constantFrom(...right).map((t) => t.toUpperCase()) },
    { weight: 1, arbitrary: fc.constantFrom(...right).map((t) => `${t}; charset=binary`) },
    { weight: 2, arbitrary: fc.constantFrom(...ALL_TYPES) },
    { weight: 1, arbitrary: fc.constantFrom(...OTHER_TYPES) },
    { weight: 1, arbitrary: fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9.+-]{1,12}$/) },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
}

// Filenames a hostile client might send.
const controlChar = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.constant(0x7f), fc.integer({ min: 0x80, max: 0x9f })).map((c) => String.fromCharCode(c));
const invisibleMark = fc.constantFrom('\u200b', '\u200d', '\u200e', '\u202e', '\u2066', '\u2069', '\ufeff', '\u00ad', '\u2028', '\u2029', '\u061c');
const unicodeChunk = fc.constantFrom('été', '夏', '😀', '👍🏽', 'e\u0301', 'עברית', 'Ω', '\u00a0', ' ', '\u3000', 'ﬁ', 'İ');
const pathPiece = fc.constantFrom('/', '\\', '//', '\\\\', '../', '..\\', '/etc/', 'C:\\', 'C:', '\\\\server\\share\\', 'file:///', '~/', './', '.\\');
const nameAtom = fc.oneof(
  { weight: 5, arbitrary: fc.stringMatching(/^[A-Za-z0-9._ -]{1,12}$/) },
  { weight: 3, arbitrary: fc.constantFrom('..', '.', '...', 'etc', 'passwd', 'Windows', 'system32', '%2e%2e', '%2f', 'CON', 'NUL', 'aux.png', 'x.png', '.htaccess') },
  { weight: 4, arbitrary: pathPiece },
  { weight: 3, arbitrary: controlChar },
  { weight: 2, arbitrary: invisibleMark },
  { weight: 2, arbitrary: unicodeChunk },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom('"', "'", ';', '=', '%', '*', '\u0000', '\r\n', '\n', '\r', '\t') },
);
export const filenameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.array(nameAtom, { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '.', '..', '/', '\\', '\u0000', '../..', '..\\..\\', '/etc/passwd', 'C:\\Windows\\win.ini') },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 200, max: 420 }), fc.constantFrom('.png', '.jpeg', '', `.${'x'.repeat(20)}`), fc.constantFrom('a', 'é', '😀', '夏'), fc.constantFrom('', '../', 'C:\\dir\\'))
      .map(([n, ext, c, dir]) => `${dir}${c.repeat(n)}${ext}`),
  },
);

export function encodingArb(filename: string): fc.Arbitrary<FilenameEncoding> {
  const latin1 = [...filename].every((c) => c.codePointAt(0)! <= 0xff);
  // A quoted parameter cannot carry a line break: the header line would end there.
  const quotable = !/[\r\n]/.test(filename);
  const choices: FilenameEncoding[] = ['ext-utf8', 'both'];
  if (quotable) choices.push('quoted', 'quoted');
  if (latin1) choices.push('ext-latin1');
  return fc.constantFrom(...choices);
}

export const LINE_BREAK = /[\r\n]/;

export function* chunksOf(body: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
}

// The multipart structure: which parts, how they are framed, and the request's Content-Type.
/** How the one file part's Content-Disposition is written: all valid (RFC 7578, 2183, 2045). */
type FileDisposition = 'quoted' | 'tokens' | 'no-spaces' | 'upper-case';

type PartSpec =
  | { kind: 'file'; disposition: FileDisposition }
  | { kind: 'file-named'; field: string }
  | { kind: 'field'; field: string; value: string }
  | { kind: 'octet'; field: string }
  | { kind: 'no-disposition' }
  | { kind: 'foreign-disposition'; value: string };

type FramingSpec =
  | { kind: 'plain' }
  | { kind: 'preamble'; text: string }
  | { kind: 'epilogue'; text: string }
  | { kind: 'close-without-crlf' }
  | { kind: 'no-close' }
  | { kind: 'truncated'; at: number }
  | { kind: 'lf-only' };

type TopSpec =
  | 'plain'
  | 'quoted'
  | 'upper-case'
  | 'with-charset'
  | 'no-boundary'
  | 'empty-boundary'
  | 'other-boundary'
  | 'multipart-mixed'
  | 'form-data-x'
  | 'json'
  | 'text'
  | 'urlencoded'
  | 'octet-stream'
  | 'none';

interface StructureCase {
  parts: PartSpec[];
  framing: FramingSpec;
  top: TopSpec;
  boundary: string;
  ref: Ref;
}

const fieldNameArb = fc.oneof(
  fc.constantFrom('upload', 'File', 'FILE', 'files', 'file[]', 'file ', ' file', 'file\u0000', '', '__proto__', 'constructor', 'toString', 'name'),
  fc.stringMatching(/^[a-z_]{1,10}$/).filter((n) => n !== 'file'),
);
const textArb = fc.string({ unit: 'grapheme-ascii', maxLength: 40 });
const partArb: fc.Arbitrary<PartSpec> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .oneof({ weight: 5, arbitrary: fc.constant<FileDisposition>('quoted') }, { weight: 1, arbitrary: fc.constantFrom<FileDisposition>('tokens', 'no-spaces', 'upper-case') })
      .map((disposition) => ({ kind: 'file' as const, disposition })),
  },
  { weight: 2, arbitrary: fieldNameArb.map((field) => ({ kind: 'file-named' as const, field })) },
  { weight: 2, arbitrary: fc.tuple(fc.oneof(fc.constant('file'), fieldNameArb), textArb).map(([field, value]) => ({ kind: 'field' as const, field, value })) },
  { weight: 1, arbitrary: fc.oneof(fc.constant('file'), fieldNameArb).map((field) => ({ kind: 'octet' as const, field })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'no-disposition' as const }) },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('attachment; name="file"; filename="x.png"', 'inline; name="file"; filename="x.png"', 'form-data; filename="x.png"', 'form-data', 'x-form-data; name="file"; filename="x.png"')
      .map((value) => ({ kind: 'foreign-disposition' as const, value })),
  },
);
const framingArb: fc.Arbitrary<FramingSpec> = fc.oneof(
  { weight: 6, arbitrary: fc.constant({ kind: 'plain' as const }) },
  { weight: 1, arbitrary: textArb.map((text) => ({ kind: 'preamble' as const, text })) },
  { weight: 1, arbitrary: textArb.map((text) => ({ kind: 'epilogue' as const, text })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'close-without-crlf' as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'no-close' as const }) },
  { weight: 2, arbitrary: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }).map((at) => ({ kind: 'truncated' as const, at })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'lf-only' as const }) },
);
const topArb: fc.Arbitrary<TopSpec> = fc.oneof(
  { weight: 8, arbitrary: fc.constant<TopSpec>('plain') },
  { weight: 3, arbitrary: fc.constantFrom<TopSpec>('quoted', 'upper-case', 'with-charset') },
  { weight: 4, arbitrary: fc.constantFrom<TopSpec>('no-boundary', 'empty-boundary', 'other-boundary', 'multipart-mixed', 'form-data-x', 'json', 'text', 'urlencoded', 'octet-stream', 'none') },
);
/** RFC 2046 boundaries: 1 to 70 bchars (no space, so none ends in one). */
const boundaryArb = fc.oneof(
  fc.stringMatching(/^[0-9A-Za-z'()+_,./:=?-]{1,70}$/),
  fc.stringMatching(/^[0-9a-f]{16,40}$/).map((h) => `----WebKitFormBoundary${h}`.slice(0, 70)),
);
export const structureArb: fc.Arbitrary<StructureCase> = fc.record({
  parts: fc.oneof({ weight: 3, arbitrary: fc.array(partArb, { minLength: 1, maxLength: 1 }) }, { weight: 2, arbitrary: fc.array(partArb, { maxLength: 3 }) }),
  framing: framingArb,
  top: topArb,
  boundary: boundaryArb,
  ref: refArb,
});

export function describeStructure(c: StructureCase): string {
  return JSON.stringify({ parts: c.parts, framing: c.framing, top: c.top, boundary: c.boundary, format: c.ref.id });
}

function encodePartSpec(p: PartSpec, ref: Ref): Part {
  switch (p.kind) {
    case 'file': {
      const name = `real.${ref.ext}`;
      const disposition = {
        quoted: `form-data; name="file"; filename="${name}"`,
        tokens: `form-data; name=file; filename=${name}`,
        'no-spaces': `form-data;name="file";filename="${name}"`,
        'upper-case': `Form-Data; NAME="file"; FILENAME="${name}"`,
      }[p.disposition];
      return { headers: [`Content-Disposition: ${disposition}`, `Content-Type: ${ref.type}`], body: ref.bytes };
    }
    case 'file-named':
      return filePart(ref.bytes, ref.type, `real.${ref.ext}`, 'quoted', p.field);
    case 'field':
      return { headers: [`Content-Disposition: form-data; name="${p.field}"`], body: Buffer.from(p.value, 'utf8') };
    case 'octet':
      return { headers: [`Content-Disposition: form-data; name="${p.field}"`, 'Content-Type: application/octet-stream'], body: ref.bytes };
    case 'no-disposition':
      return { headers: [`Content-Type: ${ref.type}`], body: ref.bytes };
    case 'foreign-disposition':
      return { headers: [`Content-Disposition: ${p.value}`, `Content-Type: ${ref.type}`], body: ref.bytes };
  }
}

const TSPECIAL = /[()<>@,;:\\"/[\]?=]/;

/** The request of a structure case and what the service must answer. */
export function buildStructureCase(c: StructureCase): { body: Buffer; contentType: string | undefined; sent: Sent; expected: string } {
  const { boundary, ref } = c;
  const parts = c.parts.map((p) => encodePartSpec(p, ref));
  // A boundary that occurs in a part's content would end that part early: not this test's subject.
  fc.pre(parts.every((p) => !p.body.includes(`--${boundary}`)));
  fc.pre(!('text' in c.framing) || !c.framing.text.includes(`--${boundary}`));
  const f = c.framing;
  let body = encodeMultipart(parts, boundary, {
    ...(f.kind === 'preamble' ? { preamble: Buffer.from(f.text) } : {}),
    ...(f.kind === 'epilogue' ? { epilogue: Buffer.from(f.text) } : {}),
    closeWithoutCrlf: f.kind === 'close-without-crlf',
    noClose: f.kind === 'no-close',
    lfOnly: f.kind === 'lf-only',
  });
  if (f.kind === 'truncated') {
    // Cut anywhere before the last byte of the closing delimiter `--boundary--`.
    const closeEnd = body.lastIndexOf(`--${boundary}--`) + boundary.length + 4;
    body = body.subarray(0, Math.floor(f.at * closeEnd));
  }
  const param = TSPECIAL.test(boundary) ? `"${boundary}"` : boundary;
  const contentType: string | undefined = {
    plain: `multipart/form-data; boundary=${param}`,
    quoted: `multipart/form-data; boundary="${boundary}"`,
    'upper-case': `MULTIPART/FORM-DATA; BOUNDARY=${param}`,
    'with-charset': `multipart/form-data; charset=utf-8; boundary=${param}`,
    'no-boundary': 'multipart/form-data',
    'empty-boundary': 'multipart/form-data; boundary=',
    'other-boundary': `multipart/form-data; boundary="${boundary.slice(0, 69)}x"`,
    'multipart-mixed': `multipart/mixed; boundary=${param}`,
    'form-data-x': `multipart/form-data-x; boundary=${param}`,
    json: 'application/json',
    text: 'text/plain',
    urlencoded: 'application/x-www-form-urlencoded',
    'octet-stream': 'application/octet-stream',
    none: undefined,
  }[c.top];
  if (c.top === 'other-boundary') fc.pre(!body.includes(`--${boundary.slice(0, 69)}x`));

  const wellFormed = ['plain', 'quoted', 'upper-case', 'with-charset'].includes(c.top) && ['plain', 'preamble', 'epilogue', 'close-without-crlf'].includes(f.kind);
  const only = c.parts.length === 1 ? c.parts[0]! : undefined;
  let expected = 'INVALID_REQUEST';
  // Exactly one part, a file named file: stored; without a filename it declares
  // application/octet-stream, which names no accepted format (its content is then refused).
  if (wellFormed && only?.kind === 'file') expected = 'stored';
  if (wellFormed && only?.kind === 'octet' && only.field === 'file') expected = 'UNSUPPORTED_MEDIA';
  const sent: Sent = { bytes: ref.bytes, declared: ref.type, filename: `real.${ref.ext}` };
  return { body, contentType, sent, expected };
}
