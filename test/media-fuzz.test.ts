/**
 * Property tests of POST /v1/media/upload against hostile uploads (spec Rule 7, Rule 8 and Errors;
 * decisions.md section 1 "a media item's name" and section 3; docs/operations.md "Media limits").
 * Bodies are built byte by byte here (not with FormData), so the multipart framing, the part
 * headers and the filename encodings can be anything a client could send; the MCP tool
 * service_media_upload, which posts to the same endpoint, gets the same contents.
 *
 * Inputs: random bytes, random bytes behind the magic bytes of accepted and refused formats, real
 * files (PNG, JPEG, WebP, GIF through sharp; WAV, MP3, Ogg, MP4, WebM, GLB written byte by byte)
 * unmodified, with byte flips, truncated, with junk appended or a slice cut out; declared part
 * types that disagree with the bytes; hostile filenames (path traversal, absolute and UNC paths,
 * C0/C1 controls, NUL, line breaks, bidi and zero-width marks, unicode, very long, empty) sent as a
 * quoted parameter and as RFC 5987 `filename*`; bodies that do not hold exactly one file part named
 * `file` (none, two, extra fields, parts without or with a foreign Content-Disposition), broken
 * framing (other boundary, missing or truncated closing delimiter, body cut short, LF-only lines),
 * wrong top-level Content-Types; and files a few bytes around the plan's largest upload, with and
 * without a Content-Length.
 *
 * Promises checked on every request:
 * - never a 5xx; every refusal is the error envelope `{success:false, code, message, requestId}`
 *   with a code of ERROR_REGISTRY and that code's registered status (UNSUPPORTED_MEDIA 400,
 *   INVALID_REQUEST 400, PAYLOAD_TOO_LARGE 413 ...), and the code the case calls for;
 * - a refusal leaves no partial write: no media row, no event row, no change in used bytes, and
 *   not one file added or removed anywhere under DATA_DIR/media. Uploads never touch the blob pool
 *   (src/modules/media/blob-pool.ts: only job results, written with putBytes, are hard links to
 *   DATA_DIR/media/.pool/<sha256>; an upload is staged in DATA_DIR/media/.staging and renamed to
 *   DATA_DIR/media/<workspaceId>/<mediaId> by LocalBlobStore.putFile), and every staged file is
 *   removed by the request that made it, so nothing at all may stay: not in .staging, not in .pool,
 *   not under the workspace. (Only an empty <workspaceId> directory could remain, if the quota
 *   re-check inside the insert transaction refused an upload after its blob was committed; the
 *   comparison is of files, and no case here reaches that path.);
 * - an accepted upload adds exactly one row, one `media.created` event holding the item, and one
 *   file, `<workspaceId>/<mediaId>`; its mimeType is the canonical type of the declared one, its
 *   sha256 and sizeBytes are those of the bytes sent, its name is the part's filename stripped of
 *   any path and control characters, GET /v1/media/{id} returns the same item, and the signed URL
 *   of GET /v1/media/{id}/download serves exactly the bytes sent.
 *
 * Found here and fixed: a part without a form-data Content-Disposition rode along with the file
 * unseen (stored, not 400), and a body cut short inside the file could leave its staging file
 * behind (a race; both src/modules/media/upload-receiver.ts); the MCP tool rewrote `\`, `"`, CR
 * and LF in its name to `_`, so a backslash path was kept (src/mcp/routes.ts). A filename holding
 * CR or LF is refused (the multipart parser skips such a part; docs/decisions.md, "Media names").
 *
 * MEDIA_FUZZ_RUNS (default 100) scales every property and MEDIA_FUZZ_SEED replays a run; the
 * default keeps the file well under a minute per database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { AddressInfo } from 'node:net';
import fc from 'fast-check';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../src/http/errors.js';
import { MCP_UPLOAD_MAX_BASE64 } from '../src/mcp/tools.js';
import { MEDIA_FORMATS, type FormatId } from '../src/modules/media/formats.js';
import { MEDIA_PLAN_LIMITS, MULTIPART_OVERHEAD_BYTES } from '../src/modules/media/limits.js';
import { call, describeEachDatabase, type TestContext } from './support/harness.js';
import { seedTenant, type Tenant } from './support/seed.js';
import { wavHeader } from './support/wav.js';
import * as files from './media-support.js';

const RUNS = Math.max(1, Number(process.env.MEDIA_FUZZ_RUNS ?? 100));
/** Uploads near the plan maximum move 25 MiB each: a few of them. */
const SIZE_RUNS = Math.max(4, Math.ceil(RUNS / 16));
/** How late the cut-body property makes each staging file's open (see there). */
const LATE_OPEN_MS = 5;
const SEED = process.env.MEDIA_FUZZ_SEED === undefined ? undefined : Number(process.env.MEDIA_FUZZ_SEED);

// ---------------------------------------------------------------------------------------------
// Real files

interface Ref {
  id: FormatId;
  /** The canonical MIME type (what the item must be stored as). */
  type: string;
  /** The extension a nameless upload falls back to (decisions.md: a name is always there). */
  ext: string;
  bytes: Buffer;
  /** Every strict prefix is refused: the container says where it ends. */
  truncationRefused: boolean;
  /** Anything appended is refused: the format's end marker or header length must be the last byte. */
  appendRefused: boolean;
}

async function references(): Promise<Ref[]> {
  const ref = (id: FormatId, bytes: Buffer, truncationRefused: boolean, appendRefused: boolean): Ref => ({
    id,
    type: MEDIA_FORMATS[id].mimeType,
    ext: MEDIA_FORMATS[id].extension,
    bytes,
    truncationRefused,
    appendRefused,
  });
  return [
    ref('png', await files.png(16, 16), true, true),
    ref('png', await files.png(3, 70), true, true),
    ref('jpeg', await files.jpeg(24, 16), true, true),
    ref('webp', await files.webp(16, 16), true, true),
    ref('gif', await files.gif(16, 16), true, true),
    ref('wav', files.wav(300), true, true),
    // MP3 frames and MP4 boxes tile the file: a cut at a frame or box boundary is a whole file.
    ref('mp3', files.mp3(4), false, false),
    // Ogg pages and WebM void elements may follow the end: appended bytes can be a valid tail.
    ref('ogg', files.ogg(), true, false),
    ref('mp4', files.mp4(), false, false),
    ref('webm', files.webm(), true, false),
    ref('glb', files.glb(), true, true),
  ];
}

const REFS = await references();

/** Magic bytes of accepted formats and of refused ones (archives, documents, executables, markup). */
const MAGICS: Buffer[] = [
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from([0xff, 0xd8, 0xff, 0xe0]),
  Buffer.from([0xff, 0xd8, 0xff, 0xdb]),
  Buffer.from('GIF89a', 'latin1'),
  Buffer.from('GIF87a\x10\x00\x10\x00\x80\x00\x00', 'latin1'),
  Buffer.from('RIFF\x24\x00\x00\x00WEBPVP8 ', 'latin1'),
  Buffer.from('RIFF\xff\xff\xff\x7fWEBPVP8L', 'latin1'),
  Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1'),
  Buffer.from('RIFF\x00\x00\x00\x00AVI LIST', 'latin1'),
  Buffer.from('ID3\x03\x00\x00\x00\x00\x00\x00', 'latin1'),
  Buffer.from([0xff, 0xfb, 0x90, 0xc4]),
  Buffer.from([0xff, 0xf3, 0x40, 0xc0]),
  Buffer.from('OggS\x00\x02', 'latin1'),
  Buffer.from('OggS\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x34\x12\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x01\x1e\x01vorbis', 'latin1'),
  Buffer.from('\x00\x00\x00\x18ftypisom', 'latin1'),
  Buffer.from('\x00\x00\x00\x14ftypqt  ', 'latin1'),
  Buffer.from('\x00\x00\x00\x1cftypM4A ', 'latin1'),
  Buffer.from('\x00\x00\x00\x01ftypisom', 'latin1'),
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3]),
  Buffer.from([0x1a, 0x45, 0xdf, 0xa3, 0x9f, 0x42, 0x82, 0x88, 0x6d, 0x61, 0x74, 0x72, 0x6f, 0x73, 0x6b, 0x61]),
  Buffer.from('glTF\x02\x00\x00\x00', 'latin1'),
  Buffer.from('PK\x03\x04', 'latin1'),
  Buffer.from('PK\x03\x04\x14\x00\x08\x00\x63\x00', 'latin1'),
  Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
  Buffer.from('%PDF-1.7\n', 'latin1'),
  Buffer.from('II*\x00\x08\x00\x00\x00', 'latin1'),
  Buffer.from('MM\x00*', 'latin1'),
  Buffer.from("7z\xbc\xaf'\x1c", 'latin1'),
  Buffer.from('Rar!\x1a\x07\x00', 'latin1'),
  Buffer.from('BM', 'latin1'),
  Buffer.from('fLaC', 'latin1'),
  Buffer.from('MThd\x00\x00\x00\x06', 'latin1'),
  Buffer.from([0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]),
  Buffer.from('\x7fELF\x02\x01\x01\x00', 'latin1'),
  Buffer.from('MZ\x90\x00', 'latin1'),
  Buffer.from('\x00asm\x01\x00\x00\x00', 'latin1'),
  Buffer.from('\xca\xfe\xba\xbe', 'latin1'),
  Buffer.from('#!/bin/sh\n', 'latin1'),
  Buffer.from('<?xml version="1.0"?><svg ', 'latin1'),
  Buffer.from('<svg xmlns="http://www.w3.org/2000/svg">', 'latin1'),
  Buffer.from('<!DOCTYPE html><html><script>', 'latin1'),
  Buffer.from('wOFF', 'latin1'),
  Buffer.from('\x00\x00\x01\x00\x01\x00', 'latin1'),
  Buffer.from('8BPS', 'latin1'),
  Buffer.from('ustar', 'latin1'),
];

const APPENDED_PAYLOADS: Buffer[] = [
  files.zipArchive(),
  Buffer.from('<html><body><script>alert(1)</script></body></html>'),
  Buffer.from('<?php system($_GET["c"]); ?>'),
  files.SVG,
  Buffer.from([0]),
  Buffer.from('\r\n'),
];

// ---------------------------------------------------------------------------------------------
// Multipart bodies, built by hand

type HeaderLine = string | Buffer;

interface Part {
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

function encodeMultipart(parts: Part[], boundary: string, f: Framing = {}): Buffer {
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
type FilenameEncoding = 'quoted' | 'ext-utf8' | 'ext-latin1' | 'both';
const FALLBACK_FILENAME = 'fallback.bin';

/** RFC 5987 ext-value: attr-chars stay, every other byte is %XX. */
function pctEncode(bytes: Buffer): string {
  let out = '';
  for (const b of bytes) {
    const c = String.fromCharCode(b);
    out += /[A-Za-z0-9!#$&+.^_`|~-]/.test(c) ? c : `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

function dispositionHeader(field: string, filename: string | undefined, encoding: FilenameEncoding = 'quoted'): string {
  let value = `form-data; name="${field}"`;
  if (filename === undefined) return `Content-Disposition: ${value}`;
  const quoted = `filename="${filename.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
  if (encoding === 'quoted') value += `; ${quoted}`;
  else if (encoding === 'ext-utf8') value += `; filename*=UTF-8''${pctEncode(Buffer.from(filename, 'utf8'))}`;
  else if (encoding === 'ext-latin1') value += `; filename*=ISO-8859-1''${pctEncode(Buffer.from(filename, 'latin1'))}`;
  else value += `; filename="${FALLBACK_FILENAME}"; filename*=UTF-8''${pctEncode(Buffer.from(filename, 'utf8'))}`;
  return `Content-Disposition: ${value}`;
}

function filePart(bytes: Buffer, declared: string | undefined, filename: string | undefined, encoding: FilenameEncoding = 'quoted', field = 'file'): Part {
  const headers: HeaderLine[] = [dispositionHeader(field, filename, encoding)];
  if (declared !== undefined) headers.push(`Content-Type: ${declared}`);
  return { headers, body: bytes };
}

function newBoundary(): string {
  return `----fuzz-${randomBytes(12).toString('hex')}`;
}

// ---------------------------------------------------------------------------------------------
// Requests and what an upload may leave behind

async function send(
  ctx: TestContext,
  t: Tenant,
  payload: Buffer | Readable,
  contentType: string | undefined,
  headers: Record<string, string> = {},
): Promise<LightMyRequestResponse> {
  // Fresh minute window: the fuzzing must not run into the points-per-minute limit (429).
  ctx.clock.advance(61_000);
  return ctx.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: {
      authorization: `Bearer ${t.secret}`,
      'x-service-workspace': t.workspace.id,
      ...(contentType === undefined ? {} : { 'content-type': contentType }),
      ...headers,
    },
    payload,
  });
}

async function uploadOne(ctx: TestContext, t: Tenant, part: Part): Promise<LightMyRequestResponse> {
  const boundary = newBoundary();
  assert.equal(part.body.includes(`\r\n--${boundary}`), false, 'the boundary is not in the content');
  return send(ctx, t, encodeMultipart([part], boundary), `multipart/form-data; boundary=${boundary}`);
}

/** Every file (not directory) under DATA_DIR/media, as paths relative to it. */
async function mediaFiles(ctx: TestContext): Promise<Set<string>> {
  const found = new Set<string>();
  const walk = async (dir: string, prefix: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    for (const e of entries) {
      const rel = `${prefix}${e.name}`;
      if (e.isDirectory()) await walk(join(dir, e.name), `${rel}/`);
      else found.add(rel);
    }
  };
  await walk(join(ctx.dataDir, 'media'), '');
  return found;
}

interface Snapshot {
  rows: number;
  events: number;
  usedBytes: number;
  files: Set<string>;
}

async function snapshot(ctx: TestContext, workspaceId: string): Promise<Snapshot> {
  const db = ctx.deps.db;
  const rows = await db.selectFrom('media').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size_bytes').as('bytes')]).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const events = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  return { rows: Number(rows.n), events: Number(events.n), usedBytes: Number(rows.bytes ?? 0), files: await mediaFiles(ctx) };
}

function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A response of the upload endpoint, through REST (inject) or through the MCP tool. */
interface Answer {
  statusCode: number;
  body: string;
  json(): any;
  /** X-Request-Id (REST only: an MCP tool result carries the body, not the headers). */
  requestIdHeader: string | undefined;
}

function fromInject(res: LightMyRequestResponse): Answer {
  return { statusCode: res.statusCode, body: res.body, json: () => res.json(), requestIdHeader: String(res.headers['x-request-id']) };
}

/** The error envelope with a registered code and that code's registered status; returns the body. */
function assertErrorEnvelope(res: Answer): { code: keyof typeof ERROR_REGISTRY; details?: Record<string, unknown> } {
  const body = res.json();
  assert.equal(body.success, false, res.body);
  assert.ok(Object.hasOwn(ERROR_REGISTRY, body.code), `registered code: ${body.code}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], `status of ${body.code}: ${res.statusCode}`);
  assert.equal(typeof body.message, 'string');
  assert.match(String(body.requestId), UUID);
  if (res.requestIdHeader !== undefined) assert.equal(body.requestId, res.requestIdHeader);
  return body;
}

/** details.reason values of 400 UNSUPPORTED_MEDIA (the route's documented list). */
const UNSUPPORTED_REASONS = new Set(['EMPTY', 'TYPE_NOT_ALLOWED', 'TYPE_MISMATCH', 'SVG_NOT_ALLOWED', 'EXECUTABLE', 'MALFORMED', 'TRAILING_DATA', 'EMBEDDED_MARKUP', 'PIXEL_LIMIT']);

function assertRefusalUnchanged(before: Snapshot, after: Snapshot): void {
  assert.deepEqual({ ...after, files: [...after.files].sort() }, { ...before, files: [...before.files].sort() }, 'a refused upload leaves no row, event, quota use or file');
}

/** Invisible characters the name must never carry: controls (Cc), format marks (Cf), line and paragraph separators. */
const STRIPPED = /[\p{Cc}\p{Cf}\u2028\u2029]/gu;
const MAX_NAME_CHARS = 255;

/**
 * decisions.md section 1: the name is the part's filename stripped of any path and of control
 * characters (the service also strips invisible format marks and surrounding spaces, and never
 * answers an empty name or a dot segment: `media.<extension>` then). Undefined when the result
 * is longer than the bound and gets shortened.
 */
function expectedName(filename: string | undefined, ext: string): string | undefined {
  const segment = (filename ?? '').replace(STRIPPED, '').split(/[\\/]/).pop()!.trim();
  const name = segment === '.' || segment === '..' ? '' : segment;
  if ([...name].length > MAX_NAME_CHARS) return undefined;
  return name === '' ? `media.${ext}` : name;
}

function assertSafeName(name: string, filename: string | undefined, ext: string): void {
  assert.equal(typeof name, 'string');
  assert.ok(name.length > 0, 'a name is never empty');
  assert.ok(!/[\\/]/.test(name), `no path separator in ${JSON.stringify(name)}`);
  assert.ok(!/[\p{Cc}]/u.test(name), `no control character in ${JSON.stringify(name)}`);
  assert.ok(!/[\u202a-\u202e\u2066-\u2069\u200b-\u200f\u2028\u2029]/.test(name), `no bidi or zero-width mark in ${JSON.stringify(name)}`);
  assert.ok(name !== '.' && name !== '..', 'not a dot segment');
  assert.ok([...name].length <= MAX_NAME_CHARS, `at most ${MAX_NAME_CHARS} characters (${[...name].length})`);
  const expected = expectedName(filename, ext);
  if (expected !== undefined) {
    assert.equal(name, expected, `name of filename ${JSON.stringify(filename)}`);
  } else {
    // Shortened: what is kept comes from the start of the last segment (an extension may be kept too).
    const segment = (filename ?? '').replace(STRIPPED, '').split(/[\\/]/).pop()!.trim();
    const dot = name.lastIndexOf('.');
    const stem = dot > 0 ? name.slice(0, dot) : name;
    assert.ok(segment.startsWith(stem), `a shortened name keeps the start of ${JSON.stringify(segment.slice(0, 40))}…: ${JSON.stringify(name)}`);
  }
}

interface Sent {
  bytes: Buffer;
  declared: string | undefined;
  filename: string | undefined;
  /**
   * Set when the part header carries two filename parameters (`filename` and `filename*`): which
   * one is "the part's filename" is not settled (RFC 7578 forbids filename* in form data, RFC 6266
   * prefers it), so the name must follow one of them.
   */
  otherFilename?: string;
}

const CANONICAL_OF_DECLARED = new Map(Object.values(MEDIA_FORMATS).flatMap((f) => f.aliases.map((a) => [a, f] as const)));

function bare(declared: string | undefined): string {
  return (declared ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Checks one response against every promise; returns 'stored' or the error code. `sent` is what
 * the request carried as its one file part (undefined when it carried no single file part, so a
 * 200 is already wrong).
 */
async function checkOutcome(ctx: TestContext, t: Tenant, before: Snapshot, response: LightMyRequestResponse | Answer, sent: Sent | undefined): Promise<string> {
  const res = 'requestIdHeader' in response ? response : fromInject(response);
  assert.ok(res.statusCode < 500, `never a 5xx: ${res.statusCode} ${res.body}`);
  if (res.requestIdHeader !== undefined) assert.match(res.requestIdHeader, UUID);
  const after = await snapshot(ctx, t.workspace.id);
  if (res.statusCode !== 200) {
    const body = assertErrorEnvelope(res);
    if (body.code === 'UNSUPPORTED_MEDIA') assert.ok(UNSUPPORTED_REASONS.has(String(body.details?.reason)), `documented reason: ${res.body}`);
    if (body.code === 'PAYLOAD_TOO_LARGE') assert.equal(body.details?.maxBytes, MEDIA_PLAN_LIMITS[t.workspace.plan].maxUploadBytes);
    assertRefusalUnchanged(before, after);
    return body.code;
  }

  assert.ok(sent, `a 200 for a request without exactly one file part named file: ${res.body}`);
  const body = res.json();
  assert.equal(body.success, true);
  assert.equal(body.code, 'PUBLIC_MEDIA_UPLOAD');
  const item = body.data;
  assert.match(item.id, UUID);
  const format = CANONICAL_OF_DECLARED.get(bare(sent.declared));
  assert.ok(format, `stored although the declared type ${JSON.stringify(sent.declared)} names no accepted format`);
  assert.deepEqual(
    { ...item, id: undefined, name: undefined },
    {
      id: undefined,
      name: undefined,
      workspaceId: t.workspace.id,
      mimeType: format.mimeType,
      sizeBytes: sent.bytes.length,
      sha256: sha256(sent.bytes),
      createdAt: new Date(ctx.clock.now()).toISOString(),
      downloadUrl: null,
    },
  );
  if (sent.otherFilename !== undefined && item.name === expectedName(sent.otherFilename, format.extension)) assertSafeName(item.name, sent.otherFilename, format.extension);
  else assertSafeName(item.name, sent.filename, format.extension);

  // Exactly one row, one event (media.created holding the item) and one file: the blob.
  assert.deepEqual(
    { rows: after.rows, events: after.events, usedBytes: after.usedBytes },
    { rows: before.rows + 1, events: before.events + 1, usedBytes: before.usedBytes + sent.bytes.length },
  );
  const added = [...after.files].filter((f) => !before.files.has(f));
  const removed = [...before.files].filter((f) => !after.files.has(f));
  assert.deepEqual({ added, removed }, { added: [`${t.workspace.id}/${item.id}`], removed: [] }, 'an upload adds its blob and nothing else');
  const events = await ctx.deps.db.selectFrom('events').select(['type', 'data_json']).where('workspace_id', '=', t.workspace.id).where('data_json', 'like', `%${item.id}%`).execute();
  assert.equal(events.length, 1, 'one event names the item');
  const event = events[0]!;
  assert.equal(event.type, 'media.created');
  assert.deepEqual(JSON.parse(event.data_json), { media: item });

  // Reads and the signed download give back the same item and exactly the bytes sent.
  const read = await call(ctx, 'GET', `/v1/media/${item.id}`, { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(read.statusCode, 200, read.body);
  assert.deepEqual(read.json().data, item);
  const download = await call(ctx, 'GET', `/v1/media/${item.id}/download`, { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(download.statusCode, 200, download.body);
  const url = new URL(download.json().data.url);
  const file = await ctx.app.inject({ method: 'GET', url: `${url.pathname}${url.search}` });
  assert.equal(file.statusCode, 200);
  assert.equal(file.headers['content-type'], format.mimeType);
  assert.equal(file.headers['content-length'], String(sent.bytes.length));
  assert.ok(file.rawPayload.equals(sent.bytes), 'the download is byte for byte what was uploaded');
  return 'stored';
}

function bump(stats: Record<string, number>, key: string): void {
  stats[key] = (stats[key] ?? 0) + 1;
}

function params(numRuns: number): fc.Parameters<unknown> {
  return { numRuns, includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) };
}

// ---------------------------------------------------------------------------------------------
// Arbitraries

const refArb = fc.constantFrom(...REFS);
const bytesArb = (maxLength: number) => fc.uint8Array({ maxLength }).map((a) => Buffer.from(a));

type ContentCase =
  | { kind: 'random'; bytes: Buffer }
  | { kind: 'magic'; bytes: Buffer }
  | { kind: 'empty'; bytes: Buffer }
  | { kind: 'original'; ref: Ref; bytes: Buffer }
  | { kind: 'flipped'; ref: Ref; bytes: Buffer }
  | { kind: 'truncated'; ref: Ref; bytes: Buffer }
  | { kind: 'appended'; ref: Ref; bytes: Buffer }
  | { kind: 'spliced'; ref: Ref; bytes: Buffer };

const contentArb: fc.Arbitrary<ContentCase> = fc.oneof(
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
function declaredArb(content: ContentCase): fc.Arbitrary<string | undefined> {
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
const filenameArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 10, arbitrary: fc.array(nameAtom, { maxLength: 8 }).map((a) => a.join('')) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '.', '..', '/', '\\', '\u0000', '../..', '..\\..\\', '/etc/passwd', 'C:\\Windows\\win.ini') },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.integer({ min: 200, max: 420 }), fc.constantFrom('.png', '.jpeg', '', `.${'x'.repeat(20)}`), fc.constantFrom('a', 'é', '😀', '夏'), fc.constantFrom('', '../', 'C:\\dir\\'))
      .map(([n, ext, c, dir]) => `${dir}${c.repeat(n)}${ext}`),
  },
);

function encodingArb(filename: string): fc.Arbitrary<FilenameEncoding> {
  const latin1 = [...filename].every((c) => c.codePointAt(0)! <= 0xff);
  // A quoted parameter cannot carry a line break: the header line would end there.
  const quotable = !/[\r\n]/.test(filename);
  const choices: FilenameEncoding[] = ['ext-utf8', 'both'];
  if (quotable) choices.push('quoted', 'quoted');
  if (latin1) choices.push('ext-latin1');
  return fc.constantFrom(...choices);
}

const LINE_BREAK = /[\r\n]/;

function* chunksOf(body: Buffer, size: number): Generator<Buffer> {
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
const structureArb: fc.Arbitrary<StructureCase> = fc.record({
  parts: fc.oneof({ weight: 3, arbitrary: fc.array(partArb, { minLength: 1, maxLength: 1 }) }, { weight: 2, arbitrary: fc.array(partArb, { maxLength: 3 }) }),
  framing: framingArb,
  top: topArb,
  boundary: boundaryArb,
  ref: refArb,
});

function describeStructure(c: StructureCase): string {
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
function buildStructureCase(c: StructureCase): { body: Buffer; contentType: string | undefined; sent: Sent; expected: string } {
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

// MCP (spec Rule 8): service_media_upload takes {workspaceId, name, mimeType, dataBase64}.

async function mcpClient(ctx: TestContext, secret: string): Promise<Client> {
  if (!ctx.app.server.listening) await ctx.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = ctx.app.server.address() as AddressInfo;
  const client = new Client({ name: 'media-fuzz', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: `Bearer ${secret}` } } }));
  return client;
}

/** The tool's answer as the upload endpoint's: its HTTP status (`_meta.httpStatus`) and REST body. */
async function mcpUpload(ctx: TestContext, client: Client, t: Tenant, name: string, mimeType: string, bytes: Buffer): Promise<Answer> {
  ctx.clock.advance(61_000);
  const result = (await client.callTool({
    name: 'service_media_upload',
    arguments: { workspaceId: t.workspace.id, name, mimeType, dataBase64: bytes.toString('base64') },
  })) as { content: { type: string; text: string }[]; _meta?: Record<string, unknown> };
  const text = result.content[0]!.text;
  const status = result._meta?.httpStatus;
  assert.equal(typeof status, 'number', `the tool call reached the upload endpoint: ${text}`);
  return { statusCode: status as number, body: text, json: () => JSON.parse(text), requestIdHeader: undefined };
}

/** Names the MCP tool accepts (1 to 255 characters). */
const mcpNameArb = filenameArb.filter((n) => [...n].length >= 1 && [...n].length <= 255);
/** Characters the tool's multipart encoder must escape or drop (src/mcp/routes.ts uploadBody). */
const MCP_REWRITTEN = /[\\"\r\n]/;

// ---------------------------------------------------------------------------------------------

describeEachDatabase('media upload fuzz', (get) => {
  test(`Rule 7 (${RUNS} runs): random, corrupted, truncated and padded files with any declared type: never a 5xx, refusals are 400 UNSUPPORTED_MEDIA leaving nothing, acceptances store exactly the bytes`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        contentArb.chain((content) => fc.tuple(fc.constant(content), declaredArb(content))),
        async ([content, declared]) => {
          const ref = 'ref' in content ? content.ref : undefined;
          const filename = `upload.${ref?.ext ?? 'bin'}`;
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(content.bytes, declared, filename));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: content.bytes, declared, filename });
          bump(stats, `${content.kind}:${outcome}`);
          if (outcome === 'stored') return;
          // Any refusal of a file part named file is about its content.
          assert.equal(outcome, 'UNSUPPORTED_MEDIA', `a file part is refused for its content: ${res.body}`);
          const reason = res.json().details.reason;
          const declaredFormat = CANONICAL_OF_DECLARED.get(bare(declared));
          if (content.kind === 'empty') assert.equal(reason, 'EMPTY');
          if (content.kind === 'original') {
            // A real file is refused only when the declared type names another format.
            assert.notEqual(declaredFormat?.id, content.ref.id, `a real ${content.ref.id} declared as ${declared} is accepted: ${res.body}`);
            assert.equal(reason, 'TYPE_MISMATCH', res.body);
          }
        },
      ),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok(Object.keys(stats).some((k) => k.endsWith(':stored')) && Object.keys(stats).some((k) => k.endsWith(':UNSUPPORTED_MEDIA')), JSON.stringify(stats));
  });

  test(`Rule 7 (${RUNS} runs): a truncated real file, or one with anything appended, is never stored where the container fixes its end`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    const exact = REFS.filter((r) => r.truncationRefused);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...exact).chain((ref) => {
          const truncated = fc.integer({ min: 1, max: ref.bytes.length - 1 }).map((n) => ({ ref, how: 'truncated', bytes: ref.bytes.subarray(0, n) }));
          if (!ref.appendRefused) return truncated;
          const appended = fc
            .oneof(bytesArb(256).filter((b) => b.length > 0), fc.constantFrom(...APPENDED_PAYLOADS), fc.constant(ref.bytes))
            .map((junk) => ({ ref, how: 'appended', bytes: Buffer.concat([ref.bytes, junk]) }));
          return fc.oneof(truncated, appended);
        }),
        async ({ ref, how, bytes }) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(bytes, ref.type, `cut.${ref.ext}`));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes, declared: ref.type, filename: `cut.${ref.ext}` });
          bump(stats, `${ref.id}:${how}:${outcome}`);
          assert.equal(outcome, 'UNSUPPORTED_MEDIA', `${how} ${ref.id} (${bytes.length} of ${ref.bytes.length} bytes): ${res.body}`);
        },
      ),
      params(RUNS),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`decisions.md 1 (${RUNS} runs): a stored item's name is the part's filename stripped of any path and control characters, however the filename is encoded`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        refArb,
        // Filenames with a line break: the next test (a known defect).
        filenameArb.filter((f) => !LINE_BREAK.test(f)).chain((filename) => fc.tuple(fc.constant(filename), encodingArb(filename))),
        async (ref, [filename, encoding]) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(ref.bytes, ref.type, filename, encoding));
          const sent: Sent = { bytes: ref.bytes, declared: ref.type, filename, ...(encoding === 'both' ? { otherFilename: FALLBACK_FILENAME } : {}) };
          const outcome = await checkOutcome(ctx, tenant, before, res, sent);
          bump(stats, `${encoding}:${outcome}`);
          assert.equal(outcome, 'stored', `a valid ${ref.id} with filename ${JSON.stringify(filename)} (${encoding}) is stored: ${res.body}`);
        },
      ),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  // @fastify/busboy skips a part whose filename holds a CR or LF (`hasBareLineBreak` in
  // lib/types/multipart.js), before anything can see it; such a name can only be sent as an RFC 5987
  // `filename*`. Such an upload is refused, documented in docs/decisions.md ("Media names"): 400
  // INVALID_REQUEST, whose message names the cause, and nothing is stored.
  test(`decisions.md 1 (${Math.ceil(RUNS / 4)} runs): a filename with a line break is refused with 400 INVALID_REQUEST and leaves nothing`, async () => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    await fc.assert(
      fc.asyncProperty(
        refArb,
        fc.tuple(filenameArb, fc.constantFrom('\r', '\n', '\r\n'), filenameArb).map(([a, br, b]) => `${a}${br}${b}`),
        fc.constantFrom<FilenameEncoding>('ext-utf8', 'ext-latin1'),
        async (ref, filename, encoding) => {
          const enc = encoding === 'ext-latin1' && [...filename].some((c) => c.codePointAt(0)! > 0xff) ? 'ext-utf8' : encoding;
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await uploadOne(ctx, tenant, filePart(ref.bytes, ref.type, filename, enc));
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: ref.bytes, declared: ref.type, filename });
          assert.equal(outcome, 'INVALID_REQUEST', `a filename with a line break (${JSON.stringify(filename)}, ${enc}) is refused: ${res.body}`);
          assert.match(res.json().message, /line break/);
        },
      ),
      params(Math.ceil(RUNS / 4)),
    );
  });

  test(`Rule 7 (${RUNS} runs): not exactly one file part named file, broken framing or a wrong Content-Type is 400 INVALID_REQUEST and leaves nothing; a well-formed single file part is stored`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(structureArb, async (c) => {
        const { body, contentType, sent, expected } = buildStructureCase(c);
        const before = await snapshot(ctx, tenant.workspace.id);
        const res = await send(ctx, tenant, body, contentType);
        const outcome = await checkOutcome(ctx, tenant, before, res, expected === 'stored' ? sent : undefined);
        bump(stats, `${expected}:${outcome}`);
        assert.equal(outcome, expected, `${describeStructure(c)}: ${res.body}`);
      }),
      params(RUNS * 2),
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok(stats['stored:stored'] && stats['INVALID_REQUEST:INVALID_REQUEST'], JSON.stringify(stats));

    // Part headers past the multipart parser's bounds (80 KiB of header, 64 header lines): what
    // does not fit is dropped, here the part's Content-Type, so the file is refused as declared
    // text/plain (a misleading reason, but a refusal). Storing it whole would be right as well;
    // either way: no 5xx, and nothing left behind by a refusal.
    const oversized: [string, HeaderLine[]][] = [
      [`${'a'.repeat(90_000)}.png`, [dispositionHeader('file', `${'a'.repeat(90_000)}.png`), 'Content-Type: image/png']],
      ['x.png', [dispositionHeader('file', 'x.png'), ...Array.from({ length: 70 }, (_, i) => `X-Pad-${i}: v`), 'Content-Type: image/png']],
    ];
    for (const [filename, headers] of oversized) {
      const before = await snapshot(ctx, tenant.workspace.id);
      const res = await uploadOne(ctx, tenant, { headers, body: REFS[0]!.bytes });
      const outcome = await checkOutcome(ctx, tenant, before, res, { bytes: REFS[0]!.bytes, declared: 'image/png', filename });
      assert.ok(['stored', 'INVALID_REQUEST', 'UNSUPPORTED_MEDIA'].includes(outcome), res.body);
    }
  });

  // Found by the property above (rarely: it is a race, about once in a thousand cut bodies under
  // the test runner): a body cut short inside the file's bytes left `.staging/<id>.part` behind.
  // The staged file was removed as soon as the pipeline failed, while its write stream was still
  // opening (creating) it on the thread pool; the open then created the file after the removal.
  // Fixed in src/modules/media/upload-receiver.ts (wait for the stream to close, then remove).
  // Here every open of a staging file is made late, which forces the race on every request.
  test(`Rule 7 (${RUNS} runs): a body cut short inside the file part is 400 INVALID_REQUEST and leaves no staged file, also when the staging file opens late`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const stagingDir = join(ctx.dataDir, 'media', '.staging');
    const stats: Record<string, number> = {};
    const open = fs.open;
    // fs.WriteStream opens its file through the fs module's `open` at the time it opens.
    (fs as { open: unknown }).open = (...args: unknown[]) => {
      const late = typeof args[0] === 'string' && args[0].startsWith(stagingDir);
      if (!late) return (open as (...a: unknown[]) => void)(...args);
      setTimeout(() => (open as (...a: unknown[]) => void)(...args), LATE_OPEN_MS);
    };
    try {
      await fc.assert(
        fc.asyncProperty(refArb, fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }), async (ref, at) => {
          const boundary = newBoundary();
          const body = encodeMultipart([filePart(ref.bytes, ref.type, `cut.${ref.ext}`)], boundary);
          const dataStart = body.indexOf('\r\n\r\n') + 4;
          const dataEnd = body.lastIndexOf(`\r\n--${boundary}--`);
          const before = await snapshot(ctx, tenant.workspace.id);
          const res = await send(ctx, tenant, body.subarray(0, dataStart + Math.floor(at * (dataEnd - dataStart))), `multipart/form-data; boundary=${boundary}`);
          // A file whose open was still pending when the answer went out would appear by now.
          await new Promise((resolve) => setTimeout(resolve, 2 * LATE_OPEN_MS));
          const outcome = await checkOutcome(ctx, tenant, before, res, undefined);
          bump(stats, outcome);
          assert.equal(outcome, 'INVALID_REQUEST', res.body);
        }),
        params(RUNS),
      );
    } finally {
      (fs as { open: unknown }).open = open;
    }
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`Rule 8 (${Math.ceil(RUNS / 2)} runs): service_media_upload applies the same content checks as REST: never a 5xx, refusals leave nothing, acceptances store exactly the decoded bytes under the stripped name`, async (t) => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const client = await mcpClient(ctx, tenant.secret);
    const stats: Record<string, number> = {};
    try {
      await fc.assert(
        fc.asyncProperty(
          contentArb
            .filter((c) => c.bytes.length > 0 && Math.ceil(c.bytes.length / 3) * 4 <= MCP_UPLOAD_MAX_BASE64)
            .chain((content) => fc.tuple(fc.constant(content), declaredArb(content).map((d) => d ?? 'image/png'))),
          mcpNameArb.filter((n) => !MCP_REWRITTEN.test(n)),
          async ([content, declared], name) => {
            fc.pre(declared.length >= 1 && declared.length <= 255 && !/[\r\n]/.test(declared));
            const before = await snapshot(ctx, tenant.workspace.id);
            const answer = await mcpUpload(ctx, client, tenant, name, declared, content.bytes);
            const outcome = await checkOutcome(ctx, tenant, before, answer, { bytes: content.bytes, declared, filename: name });
            bump(stats, `${content.kind}:${outcome}`);
            if (outcome !== 'stored') assert.equal(outcome, 'UNSUPPORTED_MEDIA', `a file is refused for its content: ${answer.body}`);
            if (content.kind === 'original' && CANONICAL_OF_DECLARED.get(bare(declared))?.id === content.ref.id) assert.equal(outcome, 'stored', answer.body);
          },
        ),
        params(Math.ceil(RUNS / 2)),
      );
    } finally {
      await client.close();
    }
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  // Found here and fixed (src/mcp/routes.ts uploadBody): the tool replaced `"`, `\`, CR and LF in
  // the name with `_`, so `C:\Users\me\photo.png` was stored with its path and `a"b.png` as
  // `a_b.png`. It now escapes `"` and `\` in the quoted filename and drops line breaks (control
  // characters, stripped anyway), so the item is named as a REST upload of the same filename.
  test(`Rule 8 (${Math.ceil(RUNS / 4)} runs): service_media_upload names the item like REST, also when the name holds a backslash, a quote or a line break`, async () => {
    const ctx = get();
    const tenant = await seedTenant(ctx.deps);
    const client = await mcpClient(ctx, tenant.secret);
    try {
      await fc.assert(
        fc.asyncProperty(refArb, mcpNameArb.filter((n) => MCP_REWRITTEN.test(n)), async (ref, name) => {
          const before = await snapshot(ctx, tenant.workspace.id);
          const answer = await mcpUpload(ctx, client, tenant, name, ref.type, ref.bytes);
          assert.equal(await checkOutcome(ctx, tenant, before, answer, { bytes: ref.bytes, declared: ref.type, filename: name }), 'stored', answer.body);
        }),
        params(Math.ceil(RUNS / 4)),
      );
    } finally {
      await client.close();
    }
  });

  test(`operations.md media limits (${SIZE_RUNS} runs): a file of at most the plan's largest upload is stored whole, one byte more is 413 PAYLOAD_TOO_LARGE and leaves nothing, with or without a Content-Length`, async (t) => {
    const ctx = get();
    const max = MEDIA_PLAN_LIMITS.free.maxUploadBytes;
    const filler = Buffer.alloc(max + 2 * 1024 * 1024);
    for (let i = 0; i < filler.length; i += 4) filler.writeUInt32LE((i * 2654435761) >>> 0, i);
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: -3, max: 3 }), fc.constantFrom(-MULTIPART_OVERHEAD_BYTES, MULTIPART_OVERHEAD_BYTES, MULTIPART_OVERHEAD_BYTES + 1, 1024 * 1024)),
        fc.constantFrom<'length' | 'chunked'>('length', 'chunked'),
        async (delta, transport) => {
          // A fresh free workspace each time (its quota is not what is tested), its blob removed after.
          const tenant = await seedTenant(ctx.deps, { plan: 'free' });
          const size = max + delta;
          const bytes = Buffer.concat([wavHeader(size - 44), filler.subarray(0, size - 44)]);
          const boundary = newBoundary();
          const body = encodeMultipart([filePart(bytes, 'audio/wav', 'edge.wav')], boundary);
          const before = await snapshot(ctx, tenant.workspace.id);
          const res =
            transport === 'length'
              ? await send(ctx, tenant, body, `multipart/form-data; boundary=${boundary}`)
              : await send(ctx, tenant, Readable.from(chunksOf(body, 256 * 1024)), `multipart/form-data; boundary=${boundary}`, { 'transfer-encoding': 'chunked' });
          const outcome = await checkOutcome(ctx, tenant, before, res, { bytes, declared: 'audio/wav', filename: 'edge.wav' });
          bump(stats, `${delta > 0 ? 'over' : 'within'}:${transport}:${outcome}`);
          assert.equal(outcome, size <= max ? 'stored' : 'PAYLOAD_TOO_LARGE', `${size} bytes (max ${max}) sent ${transport}: ${res.body}`);
          if (outcome === 'stored') await ctx.deps.blobs.delete(`${tenant.workspace.id}/${res.json().data.id}`);
        },
      ),
      {
        ...params(SIZE_RUNS),
        examples: [
          [0, 'length'],
          [1, 'length'],
          [0, 'chunked'],
          [1, 'chunked'],
        ],
      },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);

    // A Content-Length over the maximum plus the multipart allowance is refused before the body is read.
    const tenant = await seedTenant(ctx.deps, { plan: 'free' });
    const boundary = newBoundary();
    const body = encodeMultipart([filePart(REFS[0]!.bytes, 'image/png', 'small.png')], boundary);
    for (const declared of [String(max + MULTIPART_OVERHEAD_BYTES + 1), String(2 ** 53), `1${'0'.repeat(30)}`]) {
      const before = await snapshot(ctx, tenant.workspace.id);
      const res = await send(ctx, tenant, body, `multipart/form-data; boundary=${boundary}`, { 'content-length': declared });
      assert.equal(await checkOutcome(ctx, tenant, before, res, undefined), 'PAYLOAD_TOO_LARGE', `Content-Length ${declared}: ${res.body}`);
    }
  });
});
