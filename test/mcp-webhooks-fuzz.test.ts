/**
 * Property tests of two boundaries, with two tenants A (the caller) and B (the other tenant).
 *
 * 1. The MCP endpoint (`POST /mcp`, Streamable HTTP, stateless; spec Rule 8, decisions.md section 1
 *    "MCP", docs/decisions.md "MCP transport"): random JSON-RPC messages and batches, and tools/call
 *    with unknown names, arguments of wrong types or nested thousands of levels deep, missing or
 *    foreign workspaceId, oversized or non-base64 uploads and junk output cursors. Properties: never
 *    an HTTP 5xx and every response carries X-Request-Id; malformed messages are JSON-RPC errors with
 *    a client-side code (never -32603 Internal error); every write is a reported success (a
 *    notification runs nothing, no request of a batch runs unanswered); a tool result is `isError`
 *    exactly when the REST status is an error, with a registered code and its status; a call whose
 *    arguments fit the tool's published schema answers exactly what the REST route answers (status,
 *    code, details, Retry-After); non-base64 upload data is INVALID_REQUEST; nothing of B ever
 *    appears; refused calls write nothing.
 * 2. Webhooks (spec Rules 9-10, decisions.md section 1 webhook rows, Errors, decisions.md section 3,
 *    docs/decisions.md "Webhook URLs"): POST /v1/webhooks and POST /v1/webhooks/{id}/update with
 *    random bodies and URLs of every shape, mixed with list, rotate, revoke and delivery reads.
 *    Properties: never a 5xx; the registered code and status, and for URL refusals the reason the
 *    documented order of checks gives; a webhook exists only for an https URL without userinfo or
 *    fragment on an exact hostname verified in A that resolves to public addresses only; names are
 *    looked up only when verified in A; refusals change nothing; the signing secret appears only in
 *    create and rotate responses.
 *
 * Runs: MCP_FUZZ_RUNS (default 100) JSON-RPC payloads, twice as many tool calls and three times as
 * many webhook requests; each run is a few requests, and the file takes a few seconds per database.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../src/http/errors.js';
import { isBase64, stringifyJson } from '../src/mcp/routes.js';
import { addDomain } from '../src/modules/domains/service.js';
import { EVENT_TYPES } from '../src/modules/events/store.js';
import { admin, call, describeEachDatabase, type TestContext } from './support/harness.js';
import { drain, run } from './support/jobs.js';
import { assertLedgerInvariants } from './support/ledger.js';
import { seedKey, seedTenant, type Tenant } from './support/seed.js';
import { PUBLIC_ADDRESS, uniqueHost, verifyHost } from './support/webhook-hosts.js';

const RUNS = Number(process.env.MCP_FUZZ_RUNS ?? 100);
const MAX_BASE64 = 60_000; // spec Rule 8
const MAX_ACTIVE = 20; // docs/decisions.md: at most 20 active webhooks per workspace
const MAX_URL = 2048;
const PIXEL_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
const SECRET_RE = /whsec_[A-Za-z0-9_-]{43}/;
/** JSON-RPC codes that blame the client (parse error, invalid request, method not found, invalid params) or the transport (-32000). */
const CLIENT_RPC_CODES = new Set([-32700, -32600, -32601, -32602, -32000]);

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
/** An Ajv of the test's own (strict types, no coercion), to judge arguments against the schemas tools/list publishes. */
const ajv = addFormats(new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false }));

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

type Body = any; // parsed JSON of a response

function isRegistered(code: unknown): code is keyof typeof ERROR_REGISTRY {
  return typeof code === 'string' && Object.hasOwn(ERROR_REGISTRY, code);
}

/** A REST error envelope with a registered code and its registered status. */
function assertEnvelope(res: LightMyRequestResponse): Body {
  const body = res.json();
  assert.equal(body.success, false, res.body);
  assert.ok(isRegistered(body.code), `registered code: ${res.body}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], `status of ${body.code}`);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.requestId, res.headers['x-request-id']);
  return body;
}

/**
 * A value nested `depth` arrays deep. In memory it is one array holding one empty array (so schema
 * type checks see an array of non-strings, as they would the real thing); `toJsonText` writes the
 * real nesting, which neither the test nor fast-check's reporter could serialise recursively.
 */
class Deep extends Array<unknown> {
  constructor(readonly depth: number) {
    super();
    this.push([]);
  }

  /** How fast-check prints it in a counterexample. */
  [fc.toStringMethod](): string {
    return `<${this.depth} nested arrays>`;
  }
}

const DEEP_MARK = '\u0000deep:';

/** JSON text of a value that may hold Deep markers. */
function toJsonText(value: unknown): string {
  const text = JSON.stringify(value, (_key, v: unknown) => (v instanceof Deep ? `${DEEP_MARK}${v.depth}` : v)) ?? 'null';
  return text.replace(/"\\u0000deep:(\d+)"/g, (_m, d: string) => '['.repeat(Number(d)) + ']'.repeat(Number(d)));
}

/** Nesting deep enough to overflow a recursive serialiser (a few thousand levels), and shallow. */
const deepArb: fc.Arbitrary<Deep> = fc.constantFrom(3, 40, 6_000, 60_000).map((d) => new Deep(d));

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

/** Every token of the other tenant that is not in `request` must be absent from `response`. */
function assertNoForeignData(foreign: readonly string[], request: string, response: string, where: string): void {
  for (const token of foreign) {
    if (request.includes(token)) continue; // an echo of the caller's own input reveals nothing
    assert.equal(response.includes(token), false, `${where}: the response carries the other tenant's ${token}`);
  }
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

function multipart(name: string, mimeType: string, bytes: Buffer): { contentType: string; body: Buffer } {
  const boundary = '----fuzz-boundary-7d1f0c2a';
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${mimeType}\r\n\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]) };
}

/** fc.assert, with the failed assertion's message in the report (the test runner prints only the message). */
async function check<T>(property: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  // FC_SEED (and FC_PATH) replay a reported failure: the message of a failed property names both
  // (node scripts/run-tests.mjs test/mcp-webhooks-fuzz.test.ts with both set, TEST_DATABASES narrowed).
  const replay = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) } : {};
  try {
    await fc.assert(property, { numRuns, ...replay });
  } catch (e) {
    const cause = (e as { cause?: unknown }).cause;
    if (e instanceof Error && cause instanceof Error) e.message += `\nCause: ${cause.message}`;
    throw e;
  }
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

async function uploadPixel(ctx: TestContext, t: Tenant, name = 'pixel.png'): Promise<Body> {
  const form = multipart(name, 'image/png', Buffer.from(PIXEL_PNG, 'base64'));
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/media/upload',
    headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, 'content-type': form.contentType },
    payload: form.body,
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

async function buildMcpFixture(ctx: TestContext): Promise<McpFixture> {
  const a = await seedTenant(ctx.deps, { credits: 40_000 });
  const b = await seedTenant(ctx.deps, { credits: 1_000_000 });
  for (const t of [a, b]) {
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000 } });
    assert.equal(res.statusCode, 200, res.body);
  }
  const narrow = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { scopes: ['workspaces:read', 'jobs:read', 'billing:read'], transports: ['rest', 'mcp'] });

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
    (await ctx.deps.db.selectFrom(table).select('id').where('workspace_id', '=', b.workspace.id).execute()).map((r) => r.id);
  const foreign = [
    b.workspace.id,
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

const ABSENT = Symbol('absent');
type Maybe<T> = T | typeof ABSENT;

function maybe<T>(arb: fc.Arbitrary<T>, present = 4, absent = 1): fc.Arbitrary<Maybe<T>> {
  return fc.oneof({ weight: present, arbitrary: arb }, { weight: absent, arbitrary: fc.constant(ABSENT) });
}

const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  fc.integer({ min: -3, max: 3 }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.string({ maxLength: 4 }), { maxKeys: 2 }),
  fc.double({ noNaN: true }),
);

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
    await assertLedgerInvariants(ctx.deps, f.a.workspace.id);
    await assertLedgerInvariants(ctx.deps, f.b.workspace.id);
  });
});

// ---------------------------------------------------------------------------------------------
// Part 2: webhooks
// ---------------------------------------------------------------------------------------------

type UrlExpectation = 'ok' | 'not-verified' | 'address' | 'ip-public' | 'unresolvable';

interface HostEntry {
  /** As written in the URL. */
  host: string;
  expect: UrlExpectation;
  /** For 'ok': the verified ASCII hostname the URL must be stored with. */
  ascii?: string;
}

interface WebhookFixture {
  a: Tenant;
  b: Tenant;
  hosts: HostEntry[];
  /** Hostnames verified in A (the only names the service may look up on A's behalf). */
  verifiedInA: Set<string>;
  /** Verified in A and resolving only to public addresses. */
  okHosts: Set<string>;
  bWebhook: string;
  foreign: string[];
}

/** IP literals that must never be a destination (loopback, private, link-local, metadata, mapped, NAT64, 6to4 …), in many spellings. */
const BLOCKED_LITERALS = [
  '127.0.0.1',
  '127.0.0.1.',
  '127.1',
  '2130706433',
  '0x7f000001',
  '0x7f.1',
  '017700000001',
  '0177.0.0.1',
  '0',
  '0.0.0.0',
  '0x0',
  '10.0.0.1',
  '012.0.0.1',
  '192.168.1.1',
  '172.16.0.1',
  '100.64.0.1',
  '100.100.100.200',
  '169.254.169.254',
  '0xa9fea9fe',
  '2852039166',
  '0251.0376.0251.0376',
  '169.254.43518',
  '255.255.255.255',
  '224.0.0.1',
  '198.18.0.1',
  '[::1]',
  '[::]',
  '[0:0:0:0:0:0:0:1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::ffff:169.254.169.254]',
  '[0:0:0:0:0:ffff:a9fe:a9fe]',
  '[::127.0.0.1]',
  '[64:ff9b::a9fe:a9fe]',
  '[64:ff9b::7f00:1]',
  '[2002:a9fe:a9fe::1]',
  '[2002:7f00:1::]',
  '[fe80::1]',
  '[fd00:ec2::254]',
  '[fc00::1]',
  '[ff02::1]',
  '[2001:db8::1]',
  '[::ffff:0:7f00:1]',
  '[64:ff9b:1::a9fe:a9fe]',
  '[2001::a9fe:a9fe]',
  '[100::1]',
  '[::ffff:0.0.0.0]',
  '0x7f.0x0.0x0.0x1',
  '0177.1',
];
const PUBLIC_LITERALS = ['93.184.215.14', '0x5db8d70e', '1572394766', '1.1.1.1', '[2606:4700::1111]', '[::ffff:93.184.215.14]', '[2a00:1450:4001:830::200e]'];
/** What verified names resolve to; every set but the first is refused. */
const BAD_ADDRESS_SETS = [
  ['127.0.0.1'],
  ['10.0.0.7'],
  ['169.254.169.254'],
  ['::1'],
  ['fe80::1'],
  ['fd00:ec2::254'],
  ['::ffff:127.0.0.1'],
  ['::ffff:10.0.0.1'],
  ['64:ff9b::a9fe:a9fe'],
  ['0.0.0.0'],
  ['::'],
  [PUBLIC_ADDRESS, '192.168.0.10'],
  ['2606:4700::1111', '::ffff:169.254.169.254'],
  ['100.100.100.200'],
  ['127.1'],
  ['not-an-address'],
  ['fe80::1%eth0'],
  ['[::1]'],
  ['2002:a9fe:a9fe::1'],
];

function fullwidth(s: string): string {
  return [...s].map((ch) => (/[a-z]/.test(ch) ? String.fromCharCode(ch.charCodeAt(0) - 0x61 + 0xff41) : ch)).join('');
}

async function buildWebhookFixture(ctx: TestContext): Promise<WebhookFixture> {
  const a = await seedTenant(ctx.deps, { credits: 10_000 });
  const b = await seedTenant(ctx.deps, { credits: 10_000 });
  for (const t of [a, b]) {
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, pointsPerMonth: 100_000_000 } });
    assert.equal(res.statusCode, 200, res.body);
  }
  const hosts: HostEntry[] = [];
  const verifiedInA = new Set<string>();
  const okHosts = new Set<string>();
  const ok = (host: string, ascii: string) => hosts.push({ host, expect: 'ok', ascii });

  const v = await verifyHost(ctx, a.workspace.id);
  verifiedInA.add(v);
  okHosts.add(v);
  ok(v, v);
  ok(v.toUpperCase(), v);
  ok(`${v}.`, v);
  ok(v.replace(/\./g, '\u3002'), v); // ideographic full stop: a label separator for the URL host parser
  ok(fullwidth(v), v);
  ok(v.replace('.', '%2E'), v); // percent-encoded in the host: decoded by the URL host parser
  const v6 = await verifyHost(ctx, a.workspace.id, uniqueHost('six'), ['2606:4700::1111', PUBLIC_ADDRESS]);
  verifiedInA.add(v6);
  okHosts.add(v6);
  ok(v6, v6);
  const mapped = await verifyHost(ctx, a.workspace.id, uniqueHost('mapped'), [`::ffff:${PUBLIC_ADDRESS}`]);
  verifiedInA.add(mapped);
  okHosts.add(mapped);
  ok(mapped, mapped);
  const label = uniqueHost('x').split('.')[1]!;
  const idnAscii = `xn--bcher-kva.${label}.example`;
  await verifyHost(ctx, a.workspace.id, `bücher.${label}.example`, [PUBLIC_ADDRESS]);
  ctx.hostAddresses.set(idnAscii, [PUBLIC_ADDRESS]);
  verifiedInA.add(idnAscii);
  okHosts.add(idnAscii);
  ok(`bücher.${label}.example`, idnAscii);
  ok(`BÜCHER.${label}.example`, idnAscii);
  ok(idnAscii, idnAscii);

  // Verified in A but resolving to something refused, or to nothing.
  for (const addresses of BAD_ADDRESS_SETS) {
    const h = await verifyHost(ctx, a.workspace.id, uniqueHost('bad'), addresses);
    verifiedInA.add(h);
    hosts.push({ host: h, expect: 'address' });
  }
  const none = await verifyHost(ctx, a.workspace.id, uniqueHost('none'), []);
  verifiedInA.add(none);
  hosts.push({ host: none, expect: 'unresolvable' });

  // Not verified in A: the subdomain and the parent of a verified name, B's verified name, a pending
  // one, names nobody verified, single labels.
  const w = await verifyHost(ctx, b.workspace.id);
  const pending = uniqueHost('pending');
  await addDomain(ctx.deps, a.workspace.id, pending);
  ctx.hostAddresses.set(pending, [PUBLIC_ADDRESS]);
  ctx.hostAddresses.set(`api.${v}`, [PUBLIC_ADDRESS]);
  for (const host of [`api.${v}`, v.slice(v.indexOf('.') + 1), `${v}.evil.example`, `${v}-evil.example`, `evil${v}`, w, w.toUpperCase(), pending, uniqueHost(), 'localhost', 'localhost.', 'LOCALHOST', 'metadata.google.internal', 'example', 'a..b.example', `xn--${label}.example`]) {
    hosts.push({ host, expect: 'not-verified' });
  }
  for (const host of BLOCKED_LITERALS) hosts.push({ host, expect: 'address' });
  for (const host of PUBLIC_LITERALS) hosts.push({ host, expect: 'ip-public' });

  const bHook = await call(ctx, 'POST', '/v1/webhooks', { secret: b.secret, workspaceId: b.workspace.id, body: { url: `https://${w}/b`, eventTypes: ['media.created'] } });
  assert.equal(bHook.statusCode, 200, bHook.body);
  const bData = bHook.json().data;
  return { a, b, hosts, verifiedInA, okHosts, bWebhook: bData.webhook.id, foreign: [b.workspace.id, b.user.id, b.key.id, b.secret, bData.webhook.id, bData.secret] };
}

interface UrlCase {
  url: string;
  /** Undefined for free-form strings (only the general properties apply). */
  host?: HostEntry;
}

const PATH_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&\'()*+,;=:@/%é ';

function urlArb(f: WebhookFixture): fc.Arbitrary<UrlCase> {
  const scheme = fc.oneof(
    { weight: 12, arbitrary: fc.constant('https://') },
    fc.constantFrom('http://', 'HTTPS://', 'https:/', 'https:\\\\', 'https:', ' https://', 'ftp://', 'wss://', 'ws://', 'file://', 'javascript:', '//', 'https//'),
  );
  const userinfo = fc.oneof({ weight: 10, arbitrary: fc.constant('') }, fc.constantFrom('user@', 'user:pass@', ':@', '@', ':pass@', `evil.example@`, 'a%40b@'));
  const port = fc.oneof({ weight: 6, arbitrary: fc.constant('') }, fc.constantFrom(':443', ':8443', ':0', ':65535', ':65536', ':-1', ':abc', ':', ':80'));
  const path = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('', '/', '/hooks', '/hooks/in?x=1', '/a/../b', '?q=1') },
    fc.array(fc.constantFrom(...PATH_CHARS), { maxLength: 30 }).map((cs) => `/${cs.join('')}`),
    fc.integer({ min: MAX_URL - 120, max: MAX_URL + 20 }).map((n) => `/${'p'.repeat(n)}`), // trimmed below to land around 2048
  );
  const fragment = fc.oneof({ weight: 8, arbitrary: fc.constant('') }, fc.constantFrom('#', '#frag', '#/x?y'));
  const hostArb = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...f.hosts.filter((h) => h.expect === 'ok')) },
    { weight: 5, arbitrary: fc.constantFrom(...f.hosts.filter((h) => h.expect !== 'ok')) },
  );
  const composed = fc
    .tuple(scheme, userinfo, hostArb, port, path, fragment, fc.integer({ min: -40, max: 10 }))
    .map(([s, u, h, p, pa, fr, delta]): UrlCase => {
      let url = `${s}${u}${h.host}${p}${pa}${fr}`;
      if (url.length > MAX_URL - 150) url = url.slice(0, Math.max(`${s}${u}${h.host}${p}/`.length, MAX_URL + delta)) + fr;
      return { url, host: h };
    });
  const raw = fc
    .oneof(
      fc.string({ maxLength: 60 }),
      fc.webUrl({ withFragments: true, withQueryParameters: true }),
      fc.constantFrom('https://', 'https:///', 'https://:443/', 'https://[::1', 'https://exa mple.com/', 'https://%00.example/', `https://${'a'.repeat(64)}.example/`),
    )
    .map((url): UrlCase => ({ url }));
  return fc.oneof({ weight: 8, arbitrary: composed }, { weight: 1, arbitrary: raw });
}

const eventTypesArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 24, arbitrary: fc.subarray([...EVENT_TYPES], { minLength: 1 }) },
  fc.subarray([...EVENT_TYPES], { minLength: 1 }).map((xs) => [...xs, xs[0]]), // a repeat
  fc.constantFrom([], ['job.started'], ['JOB.COMPLETED'], ['job.completed', 'nope'], 'job.completed', [null], [1], [...EVENT_TYPES, 'job.completed'], ['job.completed ']),
  deepArb.map((d) => [d, d]),
  wrongType,
);

type BodyCase = { body: unknown; url?: UrlCase };

/** Create/update bodies: mostly well-formed objects with random URLs, sometimes wrong types, extra properties or not an object. */
function bodyArb(f: WebhookFixture, forUpdate: boolean): fc.Arbitrary<BodyCase> {
  const urlField = fc.oneof({ weight: 16, arbitrary: urlArb(f) }, { weight: 1, arbitrary: fc.oneof(wrongType, fc.constant('')).map((value) => ({ value })) });
  const fields = fc.record({
    url: forUpdate ? maybe(urlField, 3, 2) : maybe(urlField, 40, 1),
    eventTypes: forUpdate ? maybe(eventTypesArb, 2, 3) : maybe(eventTypesArb, 40, 1),
    enabled: maybe(fc.oneof({ weight: 8, arbitrary: fc.boolean() }, fc.constantFrom('true', 1, 0, null)), 1, 2),
    extra: maybe(
      fc.oneof(
        fc.constantFrom<Record<string, unknown>>({ secret: 'whsec_mine' }, { id: 'x' }, { workspaceId: f.b.workspace.id }, { Url: 'https://x.example/' }, { enabled: undefined }),
        deepArb.map((nested): Record<string, unknown> => ({ nested })),
      ),
      1,
      16,
    ),
  });
  const objectBody = fields.map((r): BodyCase => {
    const body: Record<string, unknown> = {};
    let url: UrlCase | undefined;
    if (r.url !== ABSENT) {
      if ('url' in r.url) {
        url = r.url;
        body.url = r.url.url;
      } else body.url = r.url.value;
    }
    if (r.eventTypes !== ABSENT) body.eventTypes = r.eventTypes;
    if (r.enabled !== ABSENT) body.enabled = r.enabled;
    if (r.extra !== ABSENT) Object.assign(body, r.extra);
    return url ? { body, url } : { body };
  });
  return fc.oneof(
    { weight: 24, arbitrary: objectBody },
    { weight: 1, arbitrary: fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.constantFrom(null, [], 'text', 5, {})).map((body): BodyCase => ({ body })) },
  );
}

/** The body's shape per the route schema: the only properties, their types, known distinct event types. */
function bodyShapeValid(sent: unknown, forUpdate: boolean): boolean {
  const body: unknown = JSON.parse(toJsonText(sent)); // what goes over the wire (undefined properties dropped)
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const o = body as Record<string, unknown>;
  const keys = Object.keys(o);
  if (keys.some((k) => !['url', 'eventTypes', 'enabled'].includes(k))) return false;
  if (forUpdate ? keys.length === 0 : !('url' in o && 'eventTypes' in o)) return false;
  if ('url' in o && (typeof o.url !== 'string' || o.url.length === 0)) return false;
  if ('eventTypes' in o) {
    const e = o.eventTypes;
    if (!Array.isArray(e) || e.length === 0 || new Set(e).size !== e.length || !e.every((x) => (EVENT_TYPES as readonly unknown[]).includes(x))) return false;
  }
  if ('enabled' in o && typeof o.enabled !== 'boolean') return false;
  return true;
}

/** The reason the documented order of URL checks gives, or 'ok'. Undefined when the URL is free-form and only parses can be judged. */
function expectedUrlOutcome(c: UrlCase): { reason: string } | { ok: true; href: string } | undefined {
  const input = c.url;
  if (input.length > MAX_URL) return { reason: 'TOO_LONG' };
  let url: URL;
  try {
    url = new URL(input);
  } catch {
    return { reason: 'INVALID_URL' };
  }
  if (url.protocol !== 'https:') return { reason: 'NOT_HTTPS' };
  if (url.username !== '' || url.password !== '') return { reason: 'USERINFO_NOT_ALLOWED' };
  if (input.includes('#')) return { reason: 'FRAGMENT_NOT_ALLOWED' };
  if (!c.host) return undefined;
  switch (c.host.expect) {
    case 'ok': {
      const expected = new URL(input);
      expected.hostname = c.host.ascii!;
      return { ok: true, href: expected.href };
    }
    case 'address':
      return { reason: 'ADDRESS_NOT_PERMITTED' };
    case 'unresolvable':
      return { reason: 'UNRESOLVABLE' };
    default:
      return { reason: 'DOMAIN_NOT_VERIFIED' };
  }
}

type Action =
  | { kind: 'create'; body: BodyCase }
  | { kind: 'update'; target: Target; body: BodyCase }
  | { kind: 'list' }
  | { kind: 'rotate'; target: Target }
  | { kind: 'revoke'; target: Target }
  | { kind: 'deliveries'; target: Target }
  | { kind: 'event' };

type Target = { kind: 'own'; pick: number } | { kind: 'revoked'; pick: number } | { kind: 'foreign' } | { kind: 'random'; id: string } | { kind: 'malformed'; id: string };

function targetArb(): fc.Arbitrary<Target> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.nat().map((pick) => ({ kind: 'own' as const, pick })) },
    { weight: 2, arbitrary: fc.nat().map((pick) => ({ kind: 'revoked' as const, pick })) },
    { weight: 2, arbitrary: fc.constant({ kind: 'foreign' as const }) },
    { weight: 1, arbitrary: fc.uuid().map((id) => ({ kind: 'random' as const, id })) },
    { weight: 1, arbitrary: fc.constantFrom('nope', '123', '00000000-0000-0000-0000-00000000000g', 'x'.repeat(37)).map((id) => ({ kind: 'malformed' as const, id })) },
  );
}

function actionArb(f: WebhookFixture): fc.Arbitrary<Action> {
  return fc.oneof(
    { weight: 10, arbitrary: bodyArb(f, false).map((body) => ({ kind: 'create' as const, body })) },
    { weight: 8, arbitrary: fc.tuple(targetArb(), bodyArb(f, true)).map(([target, body]) => ({ kind: 'update' as const, target, body })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'list' as const }) },
    { weight: 1, arbitrary: targetArb().map((target) => ({ kind: 'rotate' as const, target })) },
    { weight: 2, arbitrary: targetArb().map((target) => ({ kind: 'revoke' as const, target })) },
    { weight: 1, arbitrary: targetArb().map((target) => ({ kind: 'deliveries' as const, target })) },
    { weight: 1, arbitrary: fc.constant({ kind: 'event' as const }) },
  );
}

describeEachDatabase('webhook fuzz', (get) => {
  test(`Rules 9-10: ${RUNS * 3} random create, update, list, rotate, revoke and delivery requests: registered errors with the documented URL reasons, a webhook only on an exact hostname verified in the workspace that resolves to public addresses, no look-up of unverified names, refusals change nothing, the secret only from create and rotate`, async (t) => {
    const ctx = get();
    const f = await buildWebhookFixture(ctx);
    const a = f.a;
    const lookups: string[] = [];
    const net = ctx.deps.net;
    const originalLookup = net.lookupAddresses;
    // Fake DNS only: a name without a record does not resolve (no real look-up from this test).
    net.lookupAddresses = async (hostname: string) => {
      lookups.push(hostname);
      const addresses = ctx.hostAddresses.get(hostname);
      if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
      return addresses;
    };
    const secrets = new Set<string>();
    const stats: Record<string, number> = {};
    const count = (k: string) => (stats[k] = (stats[k] ?? 0) + 1);
    const bRowsBefore = JSON.stringify(await ctx.deps.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', f.b.workspace.id).orderBy('id').execute());

    const webhookRows = () => ctx.deps.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', a.workspace.id).orderBy('id').execute();
    const resolveTarget = async (target: Target): Promise<{ id: string; expect: 'ok' | 'revoked' | 'missing' | 'malformed' }> => {
      const rows = await webhookRows();
      const active = rows.filter((r) => r.revoked_at_ms === null);
      const revoked = rows.filter((r) => r.revoked_at_ms !== null);
      if (target.kind === 'own' && active.length > 0) return { id: active[target.pick % active.length]!.id, expect: 'ok' };
      if (target.kind === 'revoked' && revoked.length > 0) return { id: revoked[target.pick % revoked.length]!.id, expect: 'revoked' };
      if (target.kind === 'foreign') return { id: f.bWebhook, expect: 'missing' };
      if (target.kind === 'malformed') return { id: target.id, expect: 'malformed' };
      return { id: target.kind === 'random' ? target.id : '0190a5d1-0000-7000-8000-000000000000', expect: 'missing' };
    };
    const send = (method: 'GET' | 'POST', url: string, body?: unknown) =>
      call(ctx, method, url, { secret: a.secret, workspaceId: a.workspace.id, ...(body !== undefined ? { body: toJsonText(body), headers: { 'content-type': 'application/json' } } : {}) });

    try {
      await check(
        fc.asyncProperty(actionArb(f), async (action) => {
          ctx.clock.advance(1_000);
          lookups.length = 0;
          const rowsBefore = await webhookRows();
          const activeBefore = rowsBefore.filter((r) => r.revoked_at_ms === null).length;
          let res: LightMyRequestResponse;
          let requestText = '';
          let expected: { status: number; code?: string; reason?: string } | undefined;
          let okHref: string | undefined;
          let changes = false;

          if (action.kind === 'create' || action.kind === 'update') {
            const { body, url } = action.body;
            const forUpdate = action.kind === 'update';
            const target = forUpdate ? await resolveTarget(action.target) : undefined;
            const path = forUpdate ? `/v1/webhooks/${target!.id}/update` : '/v1/webhooks';
            requestText = toJsonText(body);
            res = await send('POST', path, body);
            // Expected outcome, in the order the route takes: path id, body schema, webhook state, URL, limit.
            if (target?.expect === 'malformed' || !bodyShapeValid(body, forUpdate)) expected = { status: 400, code: 'INVALID_REQUEST' };
            else if (target?.expect === 'missing') expected = { status: 404, code: 'NOT_FOUND' };
            else if (target?.expect === 'revoked') expected = { status: 409, code: 'WEBHOOK_REVOKED' };
            else {
              const outcome = typeof (body as { url?: unknown }).url === 'string' && url ? expectedUrlOutcome(url) : forUpdate && !('url' in (body as object)) ? { ok: true as const, href: '' } : undefined;
              if (outcome && 'reason' in outcome) expected = { status: 400, code: 'WEBHOOK_URL_REJECTED', reason: outcome.reason };
              else if (outcome && !forUpdate && activeBefore >= MAX_ACTIVE) expected = { status: 409, code: 'WEBHOOK_LIMIT_REACHED' };
              else if (outcome) {
                expected = { status: 200 };
                okHref = outcome.href || undefined;
              }
            }
            if (res.statusCode === 200) {
              const data = res.json().data;
              if (forUpdate) assert.deepEqual(Object.keys(data), ['webhook'], 'update returns the webhook only');
              else {
                assert.deepEqual(Object.keys(data).sort(), ['secret', 'webhook'], 'create returns the webhook and its secret');
                assert.match(data.secret, new RegExp(`^${SECRET_RE.source}$`));
                assert.ok(!secrets.has(data.secret), 'a new secret');
                secrets.add(data.secret);
              }
              const b = body as Record<string, unknown>;
              if (okHref !== undefined) assert.equal(data.webhook.url, okHref, 'the stored URL names the verified ASCII hostname');
              if (b.eventTypes !== undefined) assert.deepEqual(data.webhook.eventTypes, b.eventTypes);
              if (b.enabled !== undefined) assert.equal(data.webhook.enabled, b.enabled);
              else if (!forUpdate) assert.equal(data.webhook.enabled, true, 'enabled by default');
              assert.equal(data.webhook.workspaceId, a.workspace.id);
              changes = true;
            }
            count(`${action.kind}:${res.statusCode === 200 ? 'ok' : `${res.json().code}${res.json().details?.reason ? `/${res.json().details.reason}` : ''}`}`);
          } else if (action.kind === 'list') {
            res = await send('GET', '/v1/webhooks');
            assert.equal(res.statusCode, 200, res.body);
            const items = res.json().data.items as { id: string; workspaceId: string }[];
            assert.deepEqual(items.map((w) => w.id), rowsBefore.map((r) => r.id), 'every webhook of the workspace, oldest first');
            for (const w of items) assert.equal(w.workspaceId, a.workspace.id);
            expected = { status: 200 };
            count('list');
          } else if (action.kind === 'event') {
            // A media.created event: fan-out adds pending deliveries (nothing delivers them here).
            await uploadPixel(ctx, a, 'event.png');
            res = await send('GET', '/v1/webhooks');
            expected = { status: 200 };
            changes = true;
            count('event');
          } else {
            const target = await resolveTarget(action.target);
            const verb = action.kind;
            res = verb === 'deliveries' ? await send('GET', `/v1/webhooks/${target.id}/deliveries`) : await send('POST', `/v1/webhooks/${target.id}/${verb}`);
            if (target.expect === 'malformed') expected = { status: 400, code: 'INVALID_REQUEST' };
            else if (target.expect === 'missing') expected = { status: 404, code: 'NOT_FOUND' };
            else if (target.expect === 'revoked' && verb === 'rotate') expected = { status: 409, code: 'WEBHOOK_REVOKED' };
            else expected = { status: 200 };
            if (res.statusCode === 200) {
              const data = res.json().data;
              if (verb === 'rotate') {
                assert.deepEqual(Object.keys(data).sort(), ['secret', 'webhook']);
                assert.match(data.secret, new RegExp(`^${SECRET_RE.source}$`));
                assert.ok(!secrets.has(data.secret), 'rotation gives a new secret');
                secrets.add(data.secret);
                changes = true;
              } else if (verb === 'revoke') {
                assert.deepEqual(Object.keys(data), ['webhook']);
                assert.equal(data.webhook.enabled, false);
                assert.ok(data.webhook.revokedAt);
                changes = true;
              } else {
                for (const d of data.items as { webhookId: string }[]) assert.equal(d.webhookId, target.id);
              }
            }
            count(`${verb}:${res.statusCode === 200 ? 'ok' : res.json().code}`);
          }

          // Never a 5xx; registered error envelopes; the expected status, code and reason.
          assert.ok(res.statusCode < 500, `no 5xx: ${res.statusCode} ${res.body}`);
          if (res.statusCode !== 200) {
            const body = assertEnvelope(res);
            if (body.code === 'WEBHOOK_URL_REJECTED') assert.ok(typeof body.details?.reason === 'string', 'a URL refusal names its reason');
          }
          if (expected) {
            const got = res.json();
            assert.equal(res.statusCode, expected.status, `${action.kind} ${requestText.slice(0, 300)}: expected ${JSON.stringify(expected)}, got ${res.body.slice(0, 400)}`);
            if (expected.code) assert.equal(got.code, expected.code, `${action.kind} ${requestText.slice(0, 300)}: ${res.body.slice(0, 300)}`);
            if (expected.reason) assert.equal(got.details?.reason, expected.reason, `${action.kind} ${requestText.slice(0, 300)}: ${res.body.slice(0, 300)}`);
          } else if (res.statusCode !== 200) {
            const code = res.json().code;
            assert.ok(['INVALID_REQUEST', 'WEBHOOK_URL_REJECTED', 'WEBHOOK_LIMIT_REACHED', 'NOT_FOUND', 'WEBHOOK_REVOKED'].includes(code), code);
          }

          // Rule 10: no secret outside create and rotate responses; never B's data.
          const isSecretBearing = res.statusCode === 200 && ((action.kind === 'create') || (action.kind === 'rotate'));
          if (!isSecretBearing) {
            assert.doesNotMatch(res.body, SECRET_RE, `${action.kind} never returns a signing secret`);
            for (const s of secrets) assert.ok(!res.body.includes(s), `${action.kind} never returns a signing secret`);
          }
          assertNoForeignData(f.foreign, requestText, res.body, action.kind);

          // Names are looked up only when verified in this workspace (verification comes before resolution).
          for (const name of lookups) assert.ok(f.verifiedInA.has(name), `looked up ${name}, which is not verified in the workspace`);

          // Rule 9 as an invariant of the stored rows; refusals change nothing.
          const rowsAfter = await webhookRows();
          if (!changes) assert.deepEqual(rowsAfter, rowsBefore, `a refused or read-only ${action.kind} changes nothing`);
          let active = 0;
          for (const row of rowsAfter) {
            const u = new URL(row.url);
            assert.equal(u.protocol, 'https:', row.url);
            assert.equal(u.username + u.password, '', row.url);
            assert.ok(!row.url.includes('#'), row.url);
            assert.equal(u.hostname, row.hostname);
            assert.ok(f.okHosts.has(row.hostname), `stored hostname ${row.hostname} is verified here and resolves to public addresses only`);
            if (row.revoked_at_ms === null) active += 1;
          }
          assert.ok(active <= MAX_ACTIVE, `at most ${MAX_ACTIVE} active webhooks`);
        }),
        RUNS * 3,
      );
    } finally {
      net.lookupAddresses = originalLookup;
    }
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    const seen = Object.keys(stats).join(' ');
    for (const k of ['create:ok', 'update:ok', 'INVALID_REQUEST', 'ADDRESS_NOT_PERMITTED', 'DOMAIN_NOT_VERIFIED', 'NOT_HTTPS']) assert.ok(seen.includes(k), `${k} reached: ${JSON.stringify(stats)}`);
    assert.equal(JSON.stringify(await ctx.deps.db.selectFrom('webhooks').selectAll().where('workspace_id', '=', f.b.workspace.id).orderBy('id').execute()), bRowsBefore, "B's webhooks are untouched");
  });
});
