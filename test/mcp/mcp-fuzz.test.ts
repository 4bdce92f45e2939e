/**
 * Property tests of the MCP endpoint (`POST /mcp`, Streamable HTTP, stateless; spec Rule 8,
 * decisions.md section 1 "MCP", docs/decisions.md "MCP transport"), with two tenants A (the caller)
 * and B (the other tenant): random JSON-RPC messages and batches, and tools/call with unknown
 * names, arguments of wrong types or nested thousands of levels deep, missing or foreign
 * workspaceId, oversized or non-base64 uploads and junk output cursors. Properties: never an HTTP
 * 5xx and every response carries X-Request-Id; malformed messages are JSON-RPC errors with a
 * client-side code (never -32603 Internal error); every write is a reported success (a
 * notification runs nothing, no request of a batch runs unanswered); a tool result is `isError`
 * exactly when the REST status is an error, with a registered code and its status; a call whose
 * arguments fit the tool's published schema answers exactly what the REST route answers (status,
 * code, details, Retry-After); non-base64 upload data is INVALID_REQUEST; nothing of B ever
 * appears; refused calls write nothing. Both tenants and the narrow key are test keys (simulated
 * work, the test balance; B's rows are read under its test twin's id, which never appears either).
 *
 * The webhook property tests that once shared this file are test/webhooks/webhook-fuzz.test.ts;
 * the pieces both use are in test/support/api-fuzz.ts.
 *
 * Runs: MCP_FUZZ_RUNS (default 100) JSON-RPC payloads and twice as many tool calls; each run is a
 * few requests, and the file takes a few seconds per database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../../src/http/errors.js';
import { isBase64, stringifyJson } from '../../src/mcp/tool-replay.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { uniqueHost, verifyHost } from '../support/webhook-hosts.js';
import { check } from '../support/fast-check.js';
import { ABSENT, assertEnvelope, assertNoForeignData, deepArb, isRegistered, maybe, multipart, PIXEL_PNG, RUNS, SECRET_RE, toJsonText, uploadPixel, wrongType, type Body, type Maybe } from '../support/api-fuzz.js';

const MAX_BASE64 = 60_000; // spec Rule 8

/** JSON-RPC codes that blame the client (parse error, invalid request, method not found, invalid params) or the transport (-32000). */
const CLIENT_RPC_CODES = new Set([-32700, -32600, -32601, -32602, -32000]);

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
/** An Ajv of the test's own (strict types, no coercion), to judge arguments against the schemas tools/list publishes. */
const ajv = addFormats(new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false }));

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

const COUNTED_TABLES = ['jobs', 'credit_holds', 'credit_transactions', 'idempotency_keys', 'media', 'events', 'webhooks', 'webhook_deliveries'] as const;

/** Row counts once in-process work has settled (the same three readings 25 ms apart), so a write that lands after its response is seen. */
async function settledRowCounts(ctx: TestContext): Promise<Record<string, number>> {
  let last = await rowCounts(ctx);
  let stable = 0;
  for (let i = 0; i < 40 && stable < 2; i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const next = await rowCounts(ctx);
    stable = JSON.stringify(next) === JSON.stringify(last) ? stable + 1 : 0;
    last = next;
  }
  return last;
}

/**
 * Every counted table's rows, read by one statement (one round trip instead of one per table:
 * the counts are taken several times per fuzz case, and eight queries each time made the file
 * outlast the runner's 300 s per-file timeout on a loaded machine).
 */
async function rowCounts(ctx: TestContext): Promise<Record<string, number>> {
  const counts = sql.join(COUNTED_TABLES.map((table) => sql`(select count(*) from ${sql.table(table)}) as ${sql.ref(table)}`));
  const { rows } = await sql<Record<string, number | string>>`select ${counts}`.execute(ctx.deps.db);
  const out: Record<string, number> = {};
  for (const table of COUNTED_TABLES) out[table] = Number(rows[0]![table]);
  return out;
}

/** Strict RFC 4648 (section 4) base64 with padding: what the tests call "base64". */
function isStrictBase64(s: string): boolean {
  return /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(s);
}

/**
 * Not base64 in any reading (standard or URL-safe alphabet, with or without padding or line
 * breaks): a character outside both alphabets, padding followed by data, or a length that no
 * encoding has (4n + 1 data characters).
 */
function isNeverBase64(s: string): boolean {
  const stripped = s.replace(/[\t\n\r ]/g, '');
  if (/[^A-Za-z0-9+/_=-]/.test(stripped)) return true;
  if (/=[^=]/.test(stripped)) return true;
  const data = stripped.replace(/=+$/, '');
  const padding = stripped.length - data.length;
  // RFC 4648: at most two padding characters, completing the last quantum ("====" pads nothing).
  return data.length % 4 === 1 || padding > 2 || (padding > 0 && stripped.length % 4 !== 0);
}

// ---------------------------------------------------------------------------------------------
// Part 1: MCP
// ---------------------------------------------------------------------------------------------

const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

function mcpPost(ctx: TestContext, secret: string, payload: string, headers: Record<string, string | undefined> = {}): Promise<LightMyRequestResponse> {
  const merged: Record<string, string> = {};
  for (const [k, v] of Object.entries({ authorization: `Bearer ${secret}`, ...MCP_HEADERS, ...headers })) if (v !== undefined) merged[k] = v;
  return ctx.app.inject({ method: 'POST', url: '/mcp', headers: merged, payload });
}

interface ToolOutcome {
  status: number;
  isError: boolean;
  body: Body;
  retryAfter: number | undefined;
}

/**
 * A tools/call result: the REST body as the first text block, and as structuredContent on success
 * only (an error body would not fit the tool's outputSchema); further blocks are advice text or
 * resource links; isError exactly for a REST error status, registered codes.
 */
function readToolResult(result: Body, where: string): ToolOutcome {
  assert.ok(result !== null && typeof result === 'object', `${where}: a result object`);
  assert.ok(Array.isArray(result.content) && result.content.length >= 1 && result.content[0].type === 'text', `${where}: the body as text first`);
  for (const block of result.content.slice(1)) assert.ok(block.type === 'text' || block.type === 'resource_link', `${where}: ${block.type} block`);
  const body = JSON.parse(result.content[0].text as string);
  const status = result._meta?.httpStatus as number;
  assert.ok(Number.isInteger(status), `${where}: _meta.httpStatus`);
  assert.ok(status < 500, `${where}: no 5xx behind the tool: ${status} ${result.content[0].text}`);
  const isError = result.isError === true;
  if (isError) assert.equal(result.structuredContent, undefined, `${where}: no structuredContent on an error`);
  else assert.deepEqual(result.structuredContent, body, `${where}: structuredContent is the text body`);
  assert.equal(isError, status >= 400, `${where}: isError exactly for an error status (${status})`);
  if (isError) {
    assert.equal(body.success, false);
    assert.ok(isRegistered(body.code), `${where}: registered code ${body.code}`);
    assert.equal(ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], status, `${where}: status of ${body.code}`);
    assert.equal(typeof body.message, 'string');
  } else {
    assert.equal(body.success, true, `${where}: success body`);
  }
  return { status, isError, body, retryAfter: result._meta?.retryAfter as number | undefined };
}

interface RestRoute {
  method: 'GET' | 'POST';
  path: string;
  params?: string[];
  query?: string[];
  body?: string[];
  idempotencyKey?: boolean;
  upload?: boolean;
  /** Reads (and estimates) are replayed on REST even when they succeed. */
  readOnly: boolean;
}

/** The REST route of each fuzzed tool, written out here (not taken from src/mcp/tools.ts). */
const REST_OF: Record<string, RestRoute> = {
  service_balance_get: { method: 'GET', path: '/v1/balance', query: ['limit', 'cursor'], readOnly: true },
  service_events_list: { method: 'GET', path: '/v1/events', query: ['limit', 'cursor', 'types'], readOnly: true },
  service_jobs_get: { method: 'GET', path: '/v1/jobs/{jobId}', params: ['jobId'], readOnly: true },
  service_jobs_output: { method: 'GET', path: '/v1/jobs/{jobId}/output', params: ['jobId'], query: ['cursor'], readOnly: true },
  service_media_get: { method: 'GET', path: '/v1/media/{mediaId}', params: ['mediaId'], readOnly: true },
  service_media_upload: { method: 'POST', path: '/v1/media/upload', upload: true, readOnly: false },
  service_estimates_create: { method: 'POST', path: '/v1/estimates', body: ['operationId', 'input'], readOnly: true },
  service_runs_create: { method: 'POST', path: '/v1/runs', body: ['operationId', 'input'], idempotencyKey: true, readOnly: false },
  service_webhooks_create: { method: 'POST', path: '/v1/webhooks', body: ['url', 'eventTypes', 'enabled'], readOnly: false },
};

/** The REST request an MCP client would have sent for the same arguments (only for arguments inside the tool's schema). */
function restEquivalent(ctx: TestContext, secret: string, route: RestRoute, args: Record<string, unknown>): Promise<LightMyRequestResponse> | undefined {
  let url = route.path;
  for (const p of route.params ?? []) url = url.replace(`{${p}}`, encodeURIComponent(String(args[p])));
  const query: Record<string, string> = {};
  for (const q of route.query ?? []) if (args[q] !== undefined) query[q] = String(args[q]);
  const headers: Record<string, string> = { authorization: `Bearer ${secret}`, 'x-service-workspace': String(args.workspaceId) };
  // Without a key the MCP endpoint draws a fresh one; so does the REST twin.
  if (route.idempotencyKey) headers['idempotency-key'] = args.idempotencyKey === undefined ? randomUUID() : String(args.idempotencyKey);
  let payload: string | Buffer | undefined;
  if (route.upload) {
    const name = String(args.name);
    const mimeType = String(args.mimeType);
    const data = String(args.dataBase64);
    // Only what a REST client could send as such: a plain quoted filename, one header line, real base64.
    if (/["\\\r\n]/.test(name) || /[\r\n]/.test(mimeType) || !isStrictBase64(data)) return undefined;
    const form = multipart(name, mimeType, Buffer.from(data, 'base64'));
    headers['content-type'] = form.contentType;
    payload = form.body;
  } else if (route.body) {
    headers['content-type'] = 'application/json';
    payload = toJsonText(Object.fromEntries(route.body.filter((b) => args[b] !== undefined).map((b) => [b, args[b]])));
  }
  return ctx.app.inject({ method: route.method, url, query, headers, ...(payload !== undefined ? { payload } : {}) });
}

interface McpFixture {
  a: Tenant;
  b: Tenant;
  /** A key of A with only read scopes (its calls of write tools are 403 FORBIDDEN_SCOPE). */
  narrow: { secret: string };
  schemas: Map<string, ValidateFunction>;
  aJob: string; // completed, multi-page output
  aPendingJob: string;
  bJob: string;
  aMedia: string;
  bMedia: string;
  bCursor: string;
  aHost: string;
  bHost: string;
  foreign: string[];
}

const fixtures = new WeakMap<TestContext, Promise<McpFixture>>();

function mcpFixture(ctx: TestContext): Promise<McpFixture> {
  let f = fixtures.get(ctx);
  if (!f) {
    f = buildMcpFixture(ctx);
    fixtures.set(ctx, f);
  }
  return f;
}

async function buildMcpFixture(ctx: TestContext): Promise<McpFixture> {
  const a = await seedTenant(ctx.deps, { credits: 40_000, mode: 'test' });
  const b = await seedTenant(ctx.deps, { credits: 1_000_000, mode: 'test' });
  for (const t of [a, b]) {
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000 } });
    assert.equal(res.statusCode, 200, res.body);
  }
  const narrow = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { scopes: ['workspaces:read', 'jobs:read', 'billing:read'], transports: ['rest', 'mcp'], mode: 'test' });

  const marker = `b-private-marker-${Math.random().toString(36).slice(2)}`;
  const bRun = await run(ctx, b, 'sprite.generate', { prompt: `${marker} [sim:outputBytes=20000]`, frames: 1, frameWidth: 16, frameHeight: 16 });
  assert.equal(bRun.statusCode, 202, bRun.body);
  const aRun = await run(ctx, a, 'sprite.generate', { prompt: 'a knight [sim:outputBytes=30000]', frames: 1, frameWidth: 16, frameHeight: 16 });
  assert.equal(aRun.statusCode, 202, aRun.body);
  await drain(ctx);
  const aPending = await run(ctx, a, 'image.generate', { prompt: 'pending [sim:delay=10]', width: 256, height: 256 });
  assert.equal(aPending.statusCode, 202, aPending.body);
  const bJob = bRun.json().data.jobId as string;
  const bOut = await call(ctx, 'GET', `/v1/jobs/${bJob}/output`, { secret: b.secret, workspaceId: b.workspace.id });
  assert.equal(bOut.statusCode, 200, bOut.body);
  const bCursor = bOut.json().data.nextCursor as string;
  assert.ok(bCursor, 'B has a multi-page output');
  const aMedia = (await uploadPixel(ctx, a)).id as string;
  const bMediaItem = await uploadPixel(ctx, b, `${marker}.png`);
  const aHost = await verifyHost(ctx, a.workspace.id);
  const bHost = await verifyHost(ctx, b.workspace.id);
  const bHook = await call(ctx, 'POST', '/v1/webhooks', { secret: b.secret, workspaceId: b.workspace.id, body: { url: `https://${bHost}/in`, eventTypes: ['job.completed'] } });
  assert.equal(bHook.statusCode, 200, bHook.body);

  const ids = async (table: 'credit_allocations' | 'credit_transactions' | 'events' | 'jobs' | 'media') =>
    (await ctx.deps.db.selectFrom(table).select('id').where('workspace_id', '=', scopeOf(b)).execute()).map((r) => r.id);
  const foreign = [
    b.workspace.id,
    scopeOf(b),
    b.user.id,
    b.key.id,
    b.secret,
    marker,
    bCursor,
    bHook.json().data.webhook.id,
    bHook.json().data.secret,
    ...(await ids('credit_allocations')),
    ...(await ids('credit_transactions')),
    ...(await ids('events')),
    ...(await ids('jobs')),
    ...(await ids('media')),
  ];

  // The schemas the server publishes (tools/list of the full key), compiled by the test's own Ajv.
  const listed = await mcpPost(ctx, a.secret, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  assert.equal(listed.statusCode, 200, listed.body);
  const schemas = new Map<string, ValidateFunction>();
  for (const tool of listed.json().result.tools as { name: string; inputSchema: object }[]) schemas.set(tool.name, ajv.compile(tool.inputSchema));
  for (const name of Object.keys(REST_OF)) assert.ok(schemas.has(name), `${name} is offered`);

  return { a, b, narrow, schemas, aJob: aRun.json().data.jobId, aPendingJob: aPending.json().data.jobId, bJob, aMedia, bMedia: bMediaItem.id, bCursor, aHost, bHost, foreign };
}

// --- generators ---------------------------------------------------------------------------------

function args(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const extra = fc.oneof(
    { weight: 24, arbitrary: fc.constant({}) },
    { weight: 1, arbitrary: fc.record({ bogus: fc.jsonValue({ maxDepth: 1 }) }) },
    { weight: 1, arbitrary: fc.constantFrom({ WorkspaceId: 'x' }, { __proto__x: 1 }, { workspace_id: 'y' }) },
    { weight: 1, arbitrary: deepArb.map((deep) => ({ nested: deep })) },
  );
  return fc.tuple(fc.record(fields), extra).map(([r, x]) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(r)) if (v !== ABSENT) out[k] = v;
    return { ...out, ...x };
  });
}

function swapCase(s: string): string {
  return s.toUpperCase() === s ? s.toLowerCase() : s.toUpperCase();
}

function workspaceArb(f: McpFixture): fc.Arbitrary<Maybe<unknown>> {
  return fc.oneof(
    { weight: 24, arbitrary: fc.constant(f.a.workspace.id) },
    { weight: 3, arbitrary: fc.constant(f.b.workspace.id) },
    { weight: 1, arbitrary: fc.constant(ABSENT) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constant(swapCase(f.a.workspace.id)) },
    { weight: 1, arbitrary: fc.constant(`urn:uuid:${f.a.workspace.id}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
    { weight: 1, arbitrary: wrongType },
  );
}

function idArb(own: string[], theirs: string[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...own) },
    { weight: 4, arbitrary: fc.constantFrom(...theirs) },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 1, arbitrary: fc.constantFrom(...own).map(swapCase) },
    { weight: 1, arbitrary: fc.constantFrom('nope', '', '../balance', `${own[0]}x`, '00000000-0000-0000-0000-000000000000') },
    { weight: 1, arbitrary: wrongType },
  );
}

/** One character changed, never the last of a base64url segment (whose low bits may be unused, so a change could decode to the same bytes). */
function tamper(s: string, at: number): string {
  const positions = [...s].map((_, i) => i).filter((i) => i + 1 < s.length && s[i + 1] !== '.' && s[i] !== '.');
  const i = positions[at % positions.length]!;
  const c = s[i] === 'A' ? 'B' : 'A';
  return s.slice(0, i) + c + s.slice(i + 1);
}

type CursorKind = { kind: 'fresh' } | { kind: 'tampered'; at: number } | { kind: 'foreign' } | { kind: 'junk'; value: unknown };

const cursorArb: fc.Arbitrary<Maybe<CursorKind>> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(ABSENT) },
  { weight: 2, arbitrary: fc.constant({ kind: 'fresh' as const }) },
  { weight: 2, arbitrary: fc.nat().map((at) => ({ kind: 'tampered' as const, at })) },
  { weight: 1, arbitrary: fc.constant({ kind: 'foreign' as const }) },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc.string({ minLength: 1, maxLength: 60 }),
        fc.stringMatching(/^[A-Za-z0-9_-]{10,200}$/),
        fc.stringMatching(/^[A-Za-z0-9_-]{20,80}\.[A-Za-z0-9_-]{20,60}$/),
        fc.constantFrom('', 'null', '0', 'a'.repeat(1024), 'a'.repeat(1025), '%00', '..', 'e30.e30'),
        wrongType,
      )
      .map((value) => ({ kind: 'junk' as const, value })),
  },
);

const NOT_BASE64_CHARS = '!*.,:;%$&()~"\'<>?[]{}|^`é€\u0000';

/** dataBase64 values: real base64 (valid or not a PNG), never-base64 strings, and over-long ones. */
const dataArb: fc.Arbitrary<{ value: string; kind: 'png' | 'base64' | 'never' | 'long' }> = fc.oneof(
  { weight: 8, arbitrary: fc.constant({ value: PIXEL_PNG, kind: 'png' as const }) },
  { weight: 1, arbitrary: fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => ({ value: Buffer.from(b).toString('base64'), kind: 'base64' as const })) },
  { weight: 1, arbitrary: fc.constant({ value: 'A'.repeat(MAX_BASE64), kind: 'base64' as const }) },
  {
    weight: 4,
    arbitrary: fc
      .oneof(
        fc.tuple(fc.nat(), fc.constantFrom(...NOT_BASE64_CHARS)).map(([at, c]) => PIXEL_PNG.slice(0, at % PIXEL_PNG.length) + c + PIXEL_PNG.slice(at % PIXEL_PNG.length)),
        fc.constant(`data:image/png;base64,${PIXEL_PNG}`),
        fc.nat({ max: 16 }).map((n) => `${PIXEL_PNG.slice(0, 4 * (n + 1))}=${PIXEL_PNG.slice(4 * (n + 1))}`),
        fc.stringMatching(/^[A-Za-z0-9+/]{1,40}$/).filter((s) => s.length % 4 === 1),
        fc.constantFrom('====', '=', 'A', 'AAAAA', '!!!!', 'ZmF rZQ=!'),
      )
      .map((value) => ({ value, kind: 'never' as const })),
  },
  { weight: 1, arbitrary: fc.integer({ min: MAX_BASE64 + 1, max: MAX_BASE64 + 400 }).map((n) => ({ value: 'A'.repeat(n), kind: 'long' as const })) },
  { weight: 1, arbitrary: fc.nat({ max: 100 }).map((n) => ({ value: PIXEL_PNG + 'A'.repeat(MAX_BASE64 - PIXEL_PNG.length + 1 + n), kind: 'long' as const })) },
);

/** File names without path, quotes, backslashes, control characters or outer spaces: stored exactly as given. */
const PLAIN_NAMES = ['pixel.png', 'café.png', '写真 1.png', 'a b.png'] as const;
const CHAT_INPUT = { messages: [{ role: 'user', content: 'Hello from the fuzzer' }], maxTokens: 20 };
const IMAGE_INPUT = { prompt: 'a small cat [sim:delay=10]', width: 256, height: 256 };

interface ToolCase {
  name: string;
  args: Record<string, unknown>;
  caller: 'full' | 'narrow';
  /** Facts the case was built with (to state the specific properties). */
  cursor?: CursorKind;
  data?: { value: string; kind: string };
}

function toolCaseArb(f: McpFixture): fc.Arbitrary<ToolCase> {
  const ws = workspaceArb(f);
  const jobId = idArb([f.aJob, f.aPendingJob], [f.bJob]);
  const mediaId = idArb([f.aMedia], [f.bMedia]);
  const limit = maybe(fc.oneof(fc.integer({ min: -2, max: 120 }), fc.constantFrom('5', 1.5), wrongType));
  const cases: fc.Arbitrary<Omit<ToolCase, 'caller'>>[] = [
    args({ workspaceId: ws, limit, cursor: maybe(fc.oneof(fc.string({ maxLength: 30 }), wrongType), 1, 2) }).map((a) => ({ name: 'service_balance_get', args: a })),
    args({ workspaceId: ws, limit, types: maybe(fc.oneof(fc.constantFrom('job.completed', 'media.created,job.failed', 'nope', ''), wrongType), 1, 2) }).map((a) => ({ name: 'service_events_list', args: a })),
    args({ workspaceId: ws, jobId }).map((a) => ({ name: 'service_jobs_get', args: a })),
    args({ workspaceId: ws, mediaId }).map((a) => ({ name: 'service_media_get', args: a })),
    fc
      .tuple(args({ workspaceId: ws, jobId: fc.oneof({ weight: 4, arbitrary: fc.constant(f.aJob) }, { weight: 2, arbitrary: jobId }) }), cursorArb)
      .map(([a, cursor]) => ({ name: 'service_jobs_output', args: a, ...(cursor === ABSENT ? {} : { cursor }) })),
    fc
      .tuple(
        args({
          workspaceId: ws,
          name: maybe(
            fc.oneof(
              { weight: 8, arbitrary: fc.constantFrom(...PLAIN_NAMES, 'dir/x.png', 'q"uote.png', 'back\\slash.png') },
              fc.constantFrom('x'.repeat(256), ''),
              fc.string({ maxLength: 20 }),
              wrongType,
            ),
            12,
          ),
          mimeType: maybe(
            fc.oneof({ weight: 8, arbitrary: fc.constantFrom('image/png', 'IMAGE/PNG', 'image/png; charset=x', 'audio/wav', 'text/plain', 'image/png\r\nX-Evil: 1') }, fc.constant(''), wrongType),
            12,
          ),
          dataBase64: fc.constant(ABSENT as Maybe<unknown>),
        }),
        maybe(fc.oneof({ weight: 6, arbitrary: dataArb }, { weight: 1, arbitrary: wrongType.map((value) => ({ value, kind: 'wrong' })) }), 12),
      )
      .map(([a, data]) => {
        if (data === ABSENT) return { name: 'service_media_upload', args: a };
        const d = data as { value: unknown; kind: string };
        return { name: 'service_media_upload', args: { ...a, dataBase64: d.value }, ...(typeof d.value === 'string' ? { data: { value: d.value, kind: d.kind } } : {}) };
      }),
    args({
      workspaceId: ws,
      operationId: maybe(fc.oneof({ weight: 8, arbitrary: fc.constantFrom('chat.generate', 'image.generate') }, fc.constantFrom('nope.generate', 'CHAT.GENERATE', ''), wrongType), 12),
      input: maybe(fc.oneof({ weight: 8, arbitrary: fc.constantFrom(CHAT_INPUT, IMAGE_INPUT) }, fc.constantFrom({}, { messages: 'x' }, { prompt: '' }), deepArb.map((messages) => ({ messages })), wrongType), 12),
      idempotencyKey: maybe(fc.oneof({ weight: 6, arbitrary: fc.constantFrom('fuzz-key-1', 'fuzz-key-2', 'fuzz-key-3') }, { weight: 3, arbitrary: fc.uuid() }, fc.constantFrom('', 'k'.repeat(129)), wrongType), 12),
    }).map((a) => ({ name: 'service_runs_create', args: a })),
    args({
      workspaceId: ws,
      operationId: maybe(fc.oneof({ weight: 6, arbitrary: fc.constantFrom('chat.generate', 'image.generate', 'nope.generate') }, wrongType), 12),
      input: maybe(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(CHAT_INPUT, IMAGE_INPUT, {}, { messages: [] }) }, { weight: 2, arbitrary: deepArb.map((messages) => ({ messages })) }, wrongType), 12),
    }).map((a) => ({ name: 'service_estimates_create', args: a })),
    args({
      workspaceId: ws,
      url: maybe(fc.oneof({ weight: 6, arbitrary: fc.constantFrom(`https://${f.aHost}/mcp`, `https://${f.bHost}/mcp`, `http://${f.aHost}/`, 'https://169.254.169.254/', `https://${uniqueHost()}/`, '') }, wrongType), 12),
      eventTypes: maybe(fc.oneof({ weight: 6, arbitrary: fc.constant(['job.completed']) }, fc.constantFrom(['job.completed', 'job.completed'], ['nope'], []), deepArb.map((d) => [d, d]), wrongType), 12),
      enabled: maybe(fc.oneof(fc.boolean(), wrongType), 1, 2),
    }).map((a) => ({ name: 'service_webhooks_create', args: a })),
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom('service_nothing_here', 'SERVICE_BALANCE_GET', 'service_balance_get ', 'service_jobs_stream', '__proto__', 'constructor', 'toString', 'hasOwnProperty', ''),
          fc.string({ maxLength: 30 }),
        ),
        args({ workspaceId: ws }),
      )
      .filter(([name]) => !f.schemas.has(name))
      .map(([name, a]) => ({ name, args: a })),
  ];
  return fc.tuple(fc.oneof(...cases), fc.oneof({ weight: 5, arbitrary: fc.constant('full' as const) }, { weight: 1, arbitrary: fc.constant('narrow' as const) })).map(([c, caller]) => ({ ...c, caller }));
}

/** Turns the cursor description into the argument (a fresh cursor is read from REST just before the call). */
async function materialiseCursor(ctx: TestContext, f: McpFixture, c: ToolCase): Promise<void> {
  if (!c.cursor) return;
  if (c.cursor.kind === 'junk') {
    c.args.cursor = c.cursor.value;
    return;
  }
  if (c.cursor.kind === 'foreign') {
    c.args.cursor = f.bCursor;
    return;
  }
  const page = await call(ctx, 'GET', `/v1/jobs/${f.aJob}/output`, { secret: f.a.secret, workspaceId: f.a.workspace.id });
  assert.equal(page.statusCode, 200, page.body);
  const fresh = page.json().data.nextCursor as string;
  c.args.cursor = c.cursor.kind === 'fresh' ? fresh : tamper(fresh, c.cursor.at);
}

test('MCP replay: stringifyJson writes what JSON.stringify writes, and also what is too deep for it', () => {
  fc.assert(fc.property(fc.jsonValue(), (value) => assert.equal(stringifyJson(value), JSON.stringify(value))), { numRuns: RUNS * 5 });
  fc.assert(
    fc.property(fc.record({ a: fc.option(fc.string()), b: fc.array(fc.oneof(fc.integer(), fc.constant(undefined))) }), (value) =>
      assert.equal(stringifyJson(value), JSON.stringify(value)),
    ),
  );
  const deep = JSON.parse(`${'['.repeat(100_000)}1${']'.repeat(100_000)}`) as unknown;
  assert.throws(() => JSON.stringify(deep), RangeError);
  assert.equal(stringifyJson(deep), `${'['.repeat(100_000)}1${']'.repeat(100_000)}`);
});

test('Rule 8: isBase64 accepts exactly the texts that decode without loss (standard or URL-safe alphabet)', () => {
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 300 }), fc.boolean(), fc.boolean(), (bytes, urlSafe, padded) => {
      let text = Buffer.from(bytes).toString(urlSafe ? 'base64url' : 'base64');
      if (!padded) text = text.replace(/=+$/, '');
      assert.ok(isBase64(text), text);
      assert.deepEqual(Buffer.from(text, urlSafe ? 'base64url' : 'base64'), Buffer.from(bytes));
    }),
    { numRuns: RUNS * 5 },
  );
  for (const bad of ['iVBO=Rw0KGgo', 'a', 'abcde', 'ab=c', 'abc==', 'data:image/png;base64,iVBO', 'ab!c', 'ab\u0000c', '====']) assert.equal(isBase64(bad), false, bad);
  assert.equal(isBase64('YWJj\r\nZGVm'), true, 'MIME line breaks are tolerated');
});

describeEachDatabase('MCP fuzz', (get) => {
  test(`Rule 8 (MCP transport): ${RUNS} random JSON-RPC messages and batches never give a 5xx; malformed ones are client-side JSON-RPC errors; notifications run nothing; every write is a reported success`, async (t) => {
    const ctx = get();
    const f = await mcpFixture(ctx);
    const stats = { ok: 0, accepted202: 0, rpcErrors: 0, httpErrors: 0, toolResults: 0 };
    const httpCodes: Record<string, number> = {};
    let previous: { text: string; after: Record<string, number> } | undefined;
    const uploadArgs = { workspaceId: f.a.workspace.id, name: 'rpc.png', mimeType: 'image/png', dataBase64: PIXEL_PNG };
    const toolParams = fc.record(
      {
        name: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('service_media_upload', 'service_balance_get', 'service_nothing_here') }, wrongType),
        arguments: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(uploadArgs, { workspaceId: f.a.workspace.id }, { workspaceId: f.b.workspace.id }, { ...uploadArgs, dataBase64: 'A'.repeat(MAX_BASE64 + 1) }) },
          wrongType,
        ),
        _meta: fc.oneof({ weight: 3, arbitrary: fc.constant({ progressToken: 1 }) }, fc.constant({ progressToken: null })),
      },
      { requiredKeys: ['name', 'arguments'] },
    );
    const rpcId = fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: -5, max: 1_000_000 }) },
      fc.string({ maxLength: 30 }),
      fc.constantFrom(1e300, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, -0, 1.5, null, 'x'.repeat(2000)),
      fc.constantFrom({}, [], true),
    );
    const method = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('tools/call', 'tools/list', 'ping') },
      fc.constantFrom('initialize', 'resources/list', 'prompts/list', 'logging/setLevel', 'completion/complete', 'notifications/initialized', 'notifications/cancelled', 'tasks/list', 'nope', '', '__proto__', 'constructor'),
      fc.string({ maxLength: 20 }),
      fc.integer(),
    );
    const params = fc.oneof(
      { weight: 5, arbitrary: toolParams },
      fc.constantFrom({ protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } }, {}, { cursor: 5 }, { cursor: 'abc' }, { level: 'debug' }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const plausible = fc.record({
      jsonrpc: fc.constant('2.0'),
      id: fc.integer({ min: 1, max: 1000 }),
      method: fc.oneof({ weight: 8, arbitrary: fc.constant('tools/call') }, method),
      params: fc.oneof({ weight: 8, arbitrary: toolParams }, params),
    });
    const message = fc.oneof(
      { weight: 10, arbitrary: plausible },
      { weight: 3, arbitrary: fc.record({ jsonrpc: fc.oneof({ weight: 4, arbitrary: fc.constant('2.0') }, fc.constantFrom('1.0', '2', 2, null)), id: rpcId, method, params }, { requiredKeys: [] }) },
      { weight: 1, arbitrary: fc.record({ jsonrpc: fc.constant('2.0'), id: fc.integer(), result: fc.jsonValue({ maxDepth: 1 }) }) },
    );
    const payload = fc.oneof(
      { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
      { weight: 3, arbitrary: fc.array(message, { maxLength: 4 }).map((m) => JSON.stringify(m)) },
      // A batch whose requests share one id.
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constant({ jsonrpc: '2.0', method: 'tools/call', params: { name: 'service_media_upload', arguments: uploadArgs } }), fc.array(fc.oneof(plausible, message), { minLength: 1, maxLength: 2 }))
          .map(([first, rest]) => JSON.stringify([first, ...rest].map((x) => ({ ...x, id: 7 })))),
      },
      { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v) ?? 'null') },
      // Deep nesting in every place of a message.
      {
        weight: 2,
        arbitrary: fc.tuple(deepArb, fc.nat()).map(([deep, n]) => {
          const messages = [
            { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_estimates_create', arguments: { workspaceId: f.a.workspace.id, operationId: 'chat.generate', input: { messages: deep } } } },
            { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'service_balance_get', arguments: { workspaceId: f.a.workspace.id, nested: deep } } },
            { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: deep, arguments: deep } },
            { jsonrpc: '2.0', id: 1, method: 'tools/list', params: { cursor: deep } },
            { jsonrpc: '2.0', id: deep, method: 'ping' },
            [{ jsonrpc: '2.0', id: deep, method: 'ping' }, { jsonrpc: '2.0', id: deep, method: 'ping' }],
            { jsonrpc: '2.0', id: 1, method: deep, params: deep },
          ];
          return toJsonText(messages[n % messages.length]);
        }),
      },
      { weight: 1, arbitrary: fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('{', '[1,', '{"jsonrpc":"2.0","id":1,"method":"ping"', '\u0000', '1e999999')) },
    );
    const headers = fc.record(
      {
        accept: fc.oneof({ weight: 20, arbitrary: fc.constant(MCP_HEADERS.accept) }, fc.constantFrom('application/json', 'text/event-stream', '*/*', 'text/html')),
        'content-type': fc.oneof({ weight: 20, arbitrary: fc.constant('application/json') }, fc.constantFrom('text/plain', 'application/json; charset=utf-8', 'application/x-www-form-urlencoded')),
        'mcp-protocol-version': fc.oneof({ weight: 12, arbitrary: fc.constant(undefined) }, { weight: 6, arbitrary: fc.constant('2025-06-18') }, fc.constantFrom('2024-11-05', '1999-01-01', 'junk')),
      },
      { requiredKeys: ['accept', 'content-type'] },
    );

    await check(
      fc.asyncProperty(payload, headers, async (text, hdrs) => {
        ctx.clock.advance(5_000); // keeps authorization failures below the suspension threshold
        const before = await rowCounts(ctx);
        if (previous) assert.deepEqual(before, previous.after, `nothing is written after its response (previous request: ${previous.text.slice(0, 400)})`);
        const res = await mcpPost(ctx, f.a.secret, text, hdrs as Record<string, string | undefined>);
        const after = text.includes('tools/call') ? await settledRowCounts(ctx) : await rowCounts(ctx);
        previous = { text, after };
        assert.ok(res.statusCode < 500, `no 5xx: ${res.statusCode} ${res.body}`);
        assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, `every response carries X-Request-Id (status ${res.statusCode})`);
        assertNoForeignData(f.foreign, text, res.body, 'raw JSON-RPC');
        let uploads = 0;
        if (res.statusCode === 202) {
          assert.equal(res.body, '', '202 has no body');
          stats.accepted202 += 1;
        } else if (res.statusCode === 200) {
          // JSON, or an SSE stream (a tools/call with a progressToken, tasks/result): its data
          // lines are notifications (no id) and the responses.
          const sse = String(res.headers['content-type']).startsWith('text/event-stream');
          const parsed = sse
            ? res.body
                .split('\n')
                .filter((line) => line.startsWith('data: '))
                .map((line) => JSON.parse(line.slice(6)))
                .filter((message: Body) => !(typeof message.method === 'string' && message.method.startsWith('notifications/')))
            : res.json();
          const responses: Body[] = Array.isArray(parsed) ? parsed : [parsed];
          const requests: Body[] = (() => {
            const p = JSON.parse(text);
            return Array.isArray(p) ? p : [p];
          })();
          const byId = (id: unknown) => requests.find((q) => q && typeof q === 'object' && (typeof id === 'string' || typeof id === 'number') && q.id === id && typeof q.method === 'string');
          assert.ok(responses.length > 0);
          for (const r of responses) {
            assert.equal(r.jsonrpc, '2.0');
            assert.ok(Object.hasOwn(r, 'result') !== Object.hasOwn(r, 'error'), `result xor error: ${JSON.stringify(r)}`);
            const req = byId(r.id);
            if (r.error) {
              assert.ok(Number.isInteger(r.error.code) && typeof r.error.message === 'string', JSON.stringify(r));
              assert.ok(CLIENT_RPC_CODES.has(r.error.code), `a client's malformed request is not a server fault: ${JSON.stringify(r.error).slice(0, 300)} for ${req === undefined ? text.slice(0, 300) : `a request of method ${String(req.method).slice(0, 40)}`}`);
              stats.rpcErrors += 1;
            } else if (Array.isArray(r.result?.content)) {
              const outcome = readToolResult(r.result, 'tools/call in a message');
              if (!outcome.isError && outcome.body.code === 'PUBLIC_MEDIA_UPLOAD') uploads += 1;
              stats.toolResults += 1;
            }
          }
          stats.ok += 1;
        } else {
          // 4xx: a JSON-RPC error object from the transport, or the service's error envelope.
          const body = res.json();
          if (body.jsonrpc === '2.0') {
            assert.ok(CLIENT_RPC_CODES.has(body.error?.code), res.body);
            assert.equal(body.id, null);
          } else {
            assertEnvelope(res);
          }
          stats.httpErrors += 1;
          const key = `http${res.statusCode}:${body.code ?? body.error?.code}`;
          httpCodes[key] = (httpCodes[key] ?? 0) + 1;
        }
        // Only a reported success writes; a notification (no id) of tools/call runs nothing.
        assert.equal(after.media! - before.media!, uploads, `media rows written = successful uploads reported (${text.slice(0, 300)})`);
        for (const table of COUNTED_TABLES) if (!['media', 'events', 'webhook_deliveries'].includes(table)) assert.equal(after[table], before[table], `${table} unchanged`);
      }),
      RUNS,
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)} ${JSON.stringify(httpCodes)}`);
    assert.ok(stats.ok > 0 && stats.rpcErrors > 0 && stats.httpErrors > 0 && stats.toolResults > 0, JSON.stringify(stats));
  });

  test(`Rule 8 and decisions.md "MCP": ${RUNS} random tools/call answer as their REST route does (refusals with the same code, status and details), never carry the other tenant's data, and write nothing when refused`, async (t) => {
    const ctx = get();
    const f = await mcpFixture(ctx);
    const stats: Record<string, number> = {};
    const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
    let rpcId = 1000;

    await check(
      fc.asyncProperty(toolCaseArb(f), async (c) => {
        ctx.clock.advance(5_000);
        await materialiseCursor(ctx, f, c);
        const secret = c.caller === 'full' ? f.a.secret : f.narrow.secret;
        const request = toJsonText({ jsonrpc: '2.0', id: ++rpcId, method: 'tools/call', params: { name: c.name, arguments: c.args } });
        const before = await rowCounts(ctx);
        const res = await mcpPost(ctx, secret, request);
        const after = await rowCounts(ctx);
        assert.equal(res.statusCode, 200, `a well-formed tools/call is HTTP 200: ${res.body}`);
        assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/, 'every response carries X-Request-Id');
        const rpc = res.json();
        assert.equal(rpc.id, rpcId);
        assert.ok(rpc.result && !rpc.error, `a tool call with object arguments gets a tool result: ${res.body.slice(0, 300)}`);
        const out = readToolResult(rpc.result, c.name);
        assertNoForeignData(f.foreign, request, res.body, c.name);
        if (out.isError) assert.deepEqual(after, before, `a refused call writes nothing: ${c.name} ${out.body.code}`);
        count(out.isError ? `${c.name}:${out.body.code}` : `${c.name}:ok`);

        const validate = f.schemas.get(c.name);
        if (!validate) {
          assert.deepEqual([out.status, out.body.code], [404, 'NOT_FOUND'], `unknown tool ${JSON.stringify(c.name)}`);
          return;
        }
        if (!validate(c.args)) {
          // docs/decisions.md: arguments outside a tool's schema are INVALID_REQUEST before anything runs.
          assert.deepEqual([out.status, out.body.code], [400, 'INVALID_REQUEST'], `arguments outside the schema: ${toJsonText(c.args).slice(0, 200)}`);
          return;
        }
        // Rule 8: the upload is base64 of at most 60,000 characters; anything else is refused before any upload.
        if (c.data?.kind === 'long') assert.fail('the published schema bounds dataBase64 at 60,000 characters');
        if (c.data && isNeverBase64(c.data.value)) {
          assert.deepEqual([out.status, out.body.code], [400, 'INVALID_REQUEST'], `dataBase64 that is not base64 is refused as such: ${JSON.stringify(c.data.value.slice(0, 80))} gave ${out.body.code}`);
          return;
        }
        const ownWorkspace = c.args.workspaceId === f.a.workspace.id;
        if (c.args.workspaceId === f.b.workspace.id) assert.equal(out.body.code, 'FORBIDDEN_WORKSPACE', "B's workspace is refused");
        if (c.name === 'service_jobs_output' && ownWorkspace && c.args.jobId === f.aJob && c.cursor && c.cursor.kind !== 'fresh' && c.caller === 'full') {
          assert.equal(out.body.code, 'INVALID_CURSOR', `a ${c.cursor.kind} cursor is refused`);
        }
        if (!out.isError && c.name === 'service_media_upload') {
          const bytes = Buffer.from(String(c.args.dataBase64), 'base64');
          assert.equal(out.body.data.sha256, createHash('sha256').update(bytes).digest('hex'));
          if ((PLAIN_NAMES as readonly unknown[]).includes(c.args.name)) assert.equal(out.body.data.name, c.args.name, 'the stored name is the name given (UTF-8 intact)');
        }
        if (!out.isError && c.name === 'service_webhooks_create') assert.match(out.body.data.secret, SECRET_RE);

        // The same request over REST: same status, code, details and Retry-After.
        const route = REST_OF[c.name]!;
        if (!out.isError && !route.readOnly) return; // a success is not repeated (it would write twice)
        const restPromise = restEquivalent(ctx, secret, route, c.args);
        if (!restPromise) return;
        const rest = await restPromise;
        const restAfter = await rowCounts(ctx);
        assert.ok(rest.statusCode < 500, rest.body);
        assert.equal(out.status, rest.statusCode, `${c.name}: MCP ${out.status} ${JSON.stringify(out.body).slice(0, 200)} vs REST ${rest.statusCode} ${rest.body.slice(0, 200)}`);
        const restBody = rest.json();
        assert.equal(out.body.code, restBody.code, `${c.name}: same code`);
        if (out.isError) {
          assert.deepEqual(out.body.details, restBody.details, `${c.name}: same details`);
          assert.equal(out.retryAfter, rest.headers['retry-after'] === undefined ? undefined : Number(rest.headers['retry-after']), 'same Retry-After');
          assert.deepEqual(restAfter, after, 'the refused REST request writes nothing either');
        }
        count('restCompared');
      }),
      RUNS * 2,
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    const seen = Object.keys(stats);
    for (const code of ['FORBIDDEN_WORKSPACE', 'INVALID_REQUEST', 'NOT_FOUND']) assert.ok(seen.some((k) => k.endsWith(`:${code}`)), `${code} reached: ${JSON.stringify(stats)}`);
    assert.ok(seen.some((k) => k.endsWith(':ok')) && (stats.restCompared ?? 0) > 0, JSON.stringify(stats));
    await assertLedgerInvariants(ctx.deps, scopeOf(f.a));
    await assertLedgerInvariants(ctx.deps, scopeOf(f.b));
  });
}, testKeySuite());
