/**
 * Requests and checks of the media upload fuzz tests (test/media/media-fuzz.test.ts,
 * test/media/media-mcp-fuzz.test.ts): sending an upload, a snapshot of everything an upload may
 * leave behind (rows, events, used bytes, every file under DATA_DIR/media), and `checkOutcome`,
 * which holds an answer to the promises listed in test/media/media-fuzz.test.ts.
 *
 * MEDIA_FUZZ_RUNS (default 100) scales every property and MEDIA_FUZZ_SEED replays a run.
 */
import assert from 'node:assert/strict';
import { sha256 } from './media.js';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { MEDIA_FORMATS } from '../../src/modules/media/formats.js';
import { MEDIA_PLAN_LIMITS } from '../../src/modules/media/limits.js';
import { call, type TestContext } from './harness.js';
import { type Tenant } from './seed.js';
import { encodeMultipart, newBoundary, type Part } from './multipart.js';
import { assertRegisteredError } from './assertions.js';

export const RUNS = Math.max(1, Number(process.env.MEDIA_FUZZ_RUNS ?? 100));
/** Uploads near the plan maximum move 25 MiB each: a few of them. */
export const SIZE_RUNS = Math.max(4, Math.ceil(RUNS / 16));
/** How late the cut-body property makes each staging file's open (see there). */
export const LATE_OPEN_MS = 5;
const SEED = process.env.MEDIA_FUZZ_SEED === undefined ? undefined : Number(process.env.MEDIA_FUZZ_SEED);

// ---------------------------------------------------------------------------------------------
// Requests and what an upload may leave behind

export async function send(
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

export async function uploadOne(ctx: TestContext, t: Tenant, part: Part): Promise<LightMyRequestResponse> {
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

export async function snapshot(ctx: TestContext, workspaceId: string): Promise<Snapshot> {
  const db = ctx.deps.db;
  const rows = await db.selectFrom('media').select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.sum<number>('size_bytes').as('bytes')]).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  const events = await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('workspace_id', '=', workspaceId).executeTakeFirstOrThrow();
  return { rows: Number(rows.n), events: Number(events.n), usedBytes: Number(rows.bytes ?? 0), files: await mediaFiles(ctx) };
}


const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A response of the upload endpoint, through REST (inject) or through the MCP tool. */
export interface Answer {
  statusCode: number;
  body: string;
  json(): any;
  /** X-Request-Id (REST only: an MCP tool result carries the body, not the headers). */
  requestIdHeader: string | undefined;
}

function fromInject(res: LightMyRequestResponse): Answer {
  return { statusCode: res.statusCode, body: res.body, json: () => res.json(), requestIdHeader: String(res.headers['x-request-id']) };
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

export interface Sent {
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

export const CANONICAL_OF_DECLARED = new Map(Object.values(MEDIA_FORMATS).flatMap((f) => f.aliases.map((a) => [a, f] as const)));

export function bare(declared: string | undefined): string {
  return (declared ?? '').split(';')[0]!.trim().toLowerCase();
}

/**
 * Checks one response against every promise; returns 'stored' or the error code. `sent` is what
 * the request carried as its one file part (undefined when it carried no single file part, so a
 * 200 is already wrong).
 */
export async function checkOutcome(ctx: TestContext, t: Tenant, before: Snapshot, response: LightMyRequestResponse | Answer, sent: Sent | undefined): Promise<string> {
  const res = 'requestIdHeader' in response ? response : fromInject(response);
  assert.ok(res.statusCode < 500, `never a 5xx: ${res.statusCode} ${res.body}`);
  if (res.requestIdHeader !== undefined) assert.match(res.requestIdHeader, UUID);
  const after = await snapshot(ctx, t.workspace.id);
  if (res.statusCode !== 200) {
    const body = assertRegisteredError(res, res.requestIdHeader);
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
      livemode: true,
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

export function bump(stats: Record<string, number>, key: string): void {
  stats[key] = (stats[key] ?? 0) + 1;
}

export function params(numRuns: number): fc.Parameters<unknown> {
  return { numRuns, includeErrorInReport: true, ...(SEED === undefined ? {} : { seed: SEED }) };
}
