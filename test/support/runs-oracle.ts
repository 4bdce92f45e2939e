/**
 * The oracle and generators of the property tests of POST /v1/estimates and POST /v1/runs
 * (test/runs/runs-fuzz.test.ts and test/runs/runs-inputs-fuzz.test.ts; what they check is described
 * there): the fixture, the expected answer of every request from the contract alone, the footprint
 * of a request in the database, and the arbitraries of bodies and inputs near each published
 * schema.
 *
 * Importing this module makes host names other than localhost fail to resolve (no network).
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import dns from 'node:dns';
import { randomUUID } from 'node:crypto';
import { isIP } from 'node:net';
import fc from 'fast-check';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY } from '../../src/http/errors.js';
import { OPERATION_IDS, type OperationId } from '../../src/operations/ids.js';
import { findOperation } from '../../src/operations/registry.js';
import type { MediaKind } from '../../src/operations/contract.js';
import { admin, call, describeEachDatabase, type TestContext } from './harness.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from './seed.js';
import { publicWorkspaceId, scopeFor, type Mode } from '../../src/lib/livemode.js';
import { assertLedgerInvariants } from './ledger.js';
import { drain } from './jobs.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { SPEC_OPERATION_WEIGHTS } from './spec-weights.js';
import { glb, mp4, png, upload, wav } from './media.js';

export const RUNS = Math.max(1, Number(process.env.RUNS_FUZZ_RUNS) || 60);
export const BODY_LIMIT = 1024 * 1024;
const SYNC_OPS = new Set(['link.preview', 'chat.generate']);

// ---------------------------------------------------------------------------------------------
// No network: link.preview fetches for real. Generated URLs use IP literals of blocked ranges
// (refused before any connection); as a safety net every other host name fails to resolve here.

const realLookup = dns.lookup;
(dns as unknown as { lookup: unknown }).lookup = (hostname: string, options: unknown, callback?: unknown) => {
  const cb = (typeof options === 'function' ? options : callback) as (err: NodeJS.ErrnoException | null, ...rest: unknown[]) => void;
  if (hostname === 'localhost' || isIP(hostname) !== 0) return (realLookup as (...a: unknown[]) => void)(hostname, options, callback);
  process.nextTick(() => cb(Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname} (runs-fuzz: no network)`), { code: 'ENOTFOUND' })));
};

// ---------------------------------------------------------------------------------------------
// The oracle's own schema compiler: the published inputSchema, compiled apart from the service's.

const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;
const oracleAjv = addFormats(new Ajv({ strict: false, allErrors: false, coerceTypes: false, useDefaults: false }));

type Schema = Record<string, any>;

export interface Caller {
  name: 'a' | 'b' | 'narrow' | 'poor' | 'capped';
  secret: string;
  /** The workspace the caller names (X-Service-Workspace; the live id in both modes). */
  workspaceId: string;
  /** Where the caller's rows are stored: the workspace, or its test twin for a test key (seed.ts scopeOf). */
  scope: string;
  operations: readonly string[];
}

export interface Fixture {
  a: Tenant;
  b: Tenant;
  callers: { a: Caller; b: Caller; narrow: Caller; poor: Caller; capped: Caller };
  /** Rule 3: a tenant with few credits, and one with plenty whose key has a daily budget. */
  poor: Tenant;
  capped: Tenant;
  schemas: Map<OperationId, Schema>;
  validators: Map<OperationId, ValidateFunction>;
  /** Media of each workspace by lower-case id → kind. */
  mediaOf: Map<string, Map<string, MediaKind>>;
  /** Tenant A's media by kind (the generators' media ids). */
  ownByKind: Record<MediaKind, string[]>;
  /** Media of tenant B: to tenant A they must read exactly like ids of nothing (Rule 7). */
  foreignMedia: string[];
  /** Hostnames verified in each workspace (security.scan targets, decisions.md section 5). */
  verifiedHosts: Map<string, Set<string>>;
  stats: Map<string, number>;
}

const NARROW_OPERATIONS: OperationId[] = ['chat.generate', 'music.generate', 'image.generate'];
const POOR_CREDITS = 30_000;
export const CAPPED_DAILY_BUDGET = 50_000;

export function bump(f: Fixture, what: string): void {
  f.stats.set(what, (f.stats.get(what) ?? 0) + 1);
}

/**
 * fc.assert with a readable failure: the assertion that failed and a shortened counterexample
 * (bodies of a megabyte would drown the report), plus the seed and path to replay it.
 */
export async function assertProperty<Ts extends [unknown, ...unknown[]]>(property: fc.IAsyncPropertyWithHooks<Ts>, numRuns: number, examples: Ts[] = []): Promise<void> {
  // FC_SEED (and FC_PATH) replay a reported failure: node scripts/run-tests.mjs <file> with both set.
  const replay = process.env.FC_SEED ? { seed: Number(process.env.FC_SEED), ...(process.env.FC_PATH ? { path: process.env.FC_PATH } : {}) } : {};
  const out = await fc.check(property, { numRuns, examples, ...replay });
  if (!out.failed) return;
  const err = out.errorInstance;
  const message = err instanceof Error ? err.message : String(err);
  const shown = fc.stringify(out.counterexample);
  throw new assert.AssertionError({
    message: `${message}\n-- property failed after ${out.numRuns} runs, shrunk ${out.numShrinks} times; replay with { seed: ${out.seed}, path: "${out.counterexamplePath}" }\n-- counterexample: ${shown.length > 3000 ? `${shown.slice(0, 3000)}… (${shown.length} characters)` : shown}`,
  });
}

// ---------------------------------------------------------------------------------------------
// Database footprint: everything a request could leave behind, counted in one query.

const FOOTPRINT_SQL = sql<Record<string, unknown>>`select
  (select count(*) from jobs) as jobs,
  (select count(*) from credit_holds) as credit_holds,
  (select count(*) from credit_holds where released_at_ms is null) as open_holds,
  (select coalesce(sum(amount_mc), 0) from credit_holds where released_at_ms is null) as held_mc,
  (select count(*) from credit_transactions) as credit_transactions,
  (select coalesce(sum(amount_mc), 0) from credit_transactions) as ledger_mc,
  (select count(*) from idempotency_keys) as idempotency_keys,
  (select count(*) from job_versions) as job_versions,
  (select count(*) from events) as events,
  (select count(*) from media) as media,
  (select count(*) from webhook_deliveries) as webhook_deliveries,
  (select count(*) from notifications) as notifications,
  (select count(*) from credit_allocations) as credit_allocations,
  (select coalesce(sum(remaining_mc), 0) from credit_allocations) as remaining_mc`;

type Footprint = Record<string, number>;

export async function footprint(ctx: TestContext): Promise<Footprint> {
  const { rows } = await FOOTPRINT_SQL.execute(ctx.deps.db);
  return Object.fromEntries(Object.entries(rows[0]!).map(([k, v]) => [k, Number(v)]));
}

export function delta(before: Footprint, after: Footprint): Footprint {
  return Object.fromEntries(Object.keys(after).flatMap((k) => (after[k] !== before[k] ? [[k, after[k]! - before[k]!]] : [])));
}

// ---------------------------------------------------------------------------------------------
// Requests

export interface Req {
  endpoint: 'estimates' | 'runs';
  caller: Caller;
  /** Raw body bytes; undefined sends no body. */
  payload: Buffer | undefined;
  /** Content-Type header; undefined sends none. */
  contentType: string | undefined;
  /** Idempotency-Key header; undefined sends none. */
  idempotencyKey: string | string[] | undefined;
}

export function describeReq(r: Req): string {
  const text = r.payload === undefined ? '(no body)' : r.payload.length > 600 ? `${r.payload.subarray(0, 600).toString('utf8')}… (${r.payload.length} bytes)` : r.payload.toString('utf8');
  const key = typeof r.idempotencyKey === 'string' && r.idempotencyKey.length > 60 ? `${r.idempotencyKey.slice(0, 60)}… (${r.idempotencyKey.length})` : r.idempotencyKey;
  return `POST /v1/${r.endpoint} as ${r.caller.name}, content-type ${JSON.stringify(r.contentType)}, idempotency-key ${JSON.stringify(key)}, body ${text}`;
}

export async function send(ctx: TestContext, r: Req): Promise<LightMyRequestResponse> {
  const headers: Record<string, string | string[]> = { authorization: `Bearer ${r.caller.secret}`, 'x-service-workspace': r.caller.workspaceId };
  if (r.contentType !== undefined) headers['content-type'] = r.contentType;
  if (r.idempotencyKey !== undefined) headers['idempotency-key'] = r.idempotencyKey;
  return ctx.app.inject({ method: 'POST', url: `/v1/${r.endpoint}`, headers, ...(r.payload !== undefined ? { payload: r.payload } : {}) });
}

export function jsonReq(endpoint: Req['endpoint'], caller: Caller, body: unknown, idempotencyKey: Req['idempotencyKey'] = endpoint === 'runs' ? randomUUID() : undefined): Req {
  return { endpoint, caller, payload: Buffer.from(JSON.stringify(body), 'utf8'), contentType: 'application/json', idempotencyKey };
}

/** Never a 5xx; the success envelope with 200/202, or the error envelope with a registered code and its status. */
export function checkEnvelope(res: LightMyRequestResponse, what: string): any {
  assert.ok(res.statusCode < 500, `no 5xx: ${res.statusCode} ${res.body.slice(0, 500)}\n${what}`);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/, what);
  const body = JSON.parse(res.body);
  if (res.statusCode === 200 || res.statusCode === 202) {
    assert.equal(body.success, true, what);
    assert.equal(typeof body.code, 'string', what);
    assert.equal(typeof body.message, 'string', what);
    assert.ok(body.data !== null && typeof body.data === 'object', what);
    return body;
  }
  assert.equal(body.success, false, `${res.statusCode} is an error envelope: ${res.body}\n${what}`);
  assert.ok(Object.hasOwn(ERROR_REGISTRY, body.code), `registered code: ${body.code}\n${what}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as keyof typeof ERROR_REGISTRY][0], `registered status of ${body.code}\n${what}`);
  assert.equal(typeof body.message, 'string', what);
  assert.equal(body.requestId, res.headers['x-request-id'], what);
  assert.deepEqual(Object.keys(body).filter((k) => !['success', 'code', 'message', 'requestId', 'details'].includes(k)), [], `no other fields: ${res.body}`);
  if (body.details !== undefined) assert.ok(body.details !== null && typeof body.details === 'object' && !Array.isArray(body.details), what);
  return body;
}

// ---------------------------------------------------------------------------------------------
// The oracle: what the contract says a request must get.

/** Refusal codes the contract allows, and the admitted request when it may (or must) be accepted. */
interface Expected {
  refuse: string[];
  accept?: { op: OperationId; body: { operationId: string; input: Record<string, unknown> } };
}

export const refuse = (...codes: string[]): Expected => ({ refuse: codes });
const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);
const codePoints = (s: string) => [...s].length;

/** What secure-json-parse refuses (Fastify's default): an own __proto__ key, or constructor.prototype. */
function poisoned(v: unknown): boolean {
  const stack = [v];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node === null || typeof node !== 'object') continue;
    if (!Array.isArray(node)) {
      if (Object.hasOwn(node, '__proto__')) return true;
      const c = Object.hasOwn(node, 'constructor') ? (node as Record<string, unknown>).constructor : undefined;
      if (c !== null && typeof c === 'object' && Object.hasOwn(c, 'prototype')) return true;
    }
    for (const child of Object.values(node)) stack.push(child);
  }
  return false;
}

/** Body media types the service parses as JSON, strictly; 'either' where the contract is vague. */
function contentTypeKind(ct: string | undefined): 'json' | 'other' | 'either' {
  if (ct === undefined) return 'other';
  const [type, ...params] = ct.split(';');
  const media = type!.trim().toLowerCase();
  if (media !== 'application/json') return 'other';
  if (params.length === 0) return type === type!.trim() ? 'json' : 'either';
  return params.every((p) => /^\s*charset=("?)utf-8\1\s*$/i.test(p)) ? 'json' : 'either';
}

export function expectedFor(f: Fixture, r: Req): Expected {
  const hasBody = r.payload !== undefined && r.payload.length > 0;
  const ctKind = hasBody ? contentTypeKind(r.contentType) : 'json';
  // Over 1 MiB: 413, or 400 first when the content type is refused anyway (the order of the two is not specified).
  if (r.payload !== undefined && r.payload.length > BODY_LIMIT) return ctKind === 'json' ? refuse('PAYLOAD_TOO_LARGE') : refuse('PAYLOAD_TOO_LARGE', 'INVALID_REQUEST');
  if (ctKind === 'other') return refuse('INVALID_REQUEST');
  const json = expectedJson(f, r);
  return ctKind === 'json' ? json : { ...json, refuse: [...new Set([...json.refuse, 'INVALID_REQUEST'])] };
}

function expectedJson(f: Fixture, r: Req): Expected {
  const text = r.payload === undefined ? '' : r.payload.toString('utf8');
  if (text.trim() === '') return refuse('INVALID_REQUEST'); // no body: the body schema wants an object
  let body: unknown;
  try {
    body = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return refuse('INVALID_REQUEST');
  }
  if (poisoned(body)) return refuse('INVALID_REQUEST');
  // Rule 1: exactly operationId (a string of 1 to 100 characters) and input (an object).
  if (!isPlainObject(body)) return refuse('INVALID_REQUEST');
  const keys = Object.keys(body).sort();
  if (keys.length !== 2 || keys[0] !== 'input' || keys[1] !== 'operationId') return refuse('INVALID_REQUEST');
  const { operationId, input } = body as { operationId: unknown; input: unknown };
  if (typeof operationId !== 'string' || codePoints(operationId) < 1 || codePoints(operationId) > 100 || !isPlainObject(input)) return refuse('INVALID_REQUEST');
  if (Array.isArray(r.idempotencyKey)) {
    // A header sent twice: refused as malformed or missing, or taken as one joined value.
    const joined = expectedJson(f, { ...r, idempotencyKey: r.idempotencyKey.join(', ') });
    return { ...joined, refuse: [...new Set([...joined.refuse, 'INVALID_REQUEST', 'IDEMPOTENCY_KEY_REQUIRED'])] };
  }
  // decisions.md 1: runs require an Idempotency-Key (400 IDEMPOTENCY_KEY_REQUIRED when missing);
  // spec: 1 to 128 characters, so a longer key was given but is a malformed header (400 INVALID_REQUEST).
  if (r.endpoint === 'runs' && (r.idempotencyKey === undefined || r.idempotencyKey.length < 1)) return refuse('IDEMPOTENCY_KEY_REQUIRED');
  if (r.endpoint === 'runs' && r.idempotencyKey!.length > 128) return refuse('INVALID_REQUEST');
  if (!(OPERATION_IDS as string[]).includes(operationId)) return refuse('UNKNOWN_OPERATION');
  const op = operationId as OperationId;
  if (!r.caller.operations.includes(op)) return refuse('FORBIDDEN_OPERATION');
  // (The oracle's validator applies no defaults, so it may see the input itself: no recursive clone.)
  if (!f.validators.get(op)!(input)) return refuse('INVALID_INPUT');
  if (!mediaReferencesOk(f, r.caller, op, input)) return refuse('INVALID_INPUT');
  // Issue 37: a voice field names a workspace voice; the fuzzed workspaces have none, so any id is
  // unknown (400 INVALID_INPUT naming the field).
  if (VOICE_FIELDS[op] !== undefined && input[VOICE_FIELDS[op]!] !== undefined) return refuse('INVALID_INPUT');
  // Rules of video.edit a JSON Schema cannot say: a trim ends after it starts; one format step at most.
  if (op === 'video.edit') {
    const edits = (Array.isArray(input.edits) ? input.edits : []) as { type?: unknown; startSeconds?: number; endSeconds?: number }[];
    if (edits.some((e) => e.type === 'trim' && !(e.endSeconds! > e.startSeconds!)) || edits.filter((e) => e.type === 'format').length > 1) return refuse('INVALID_INPUT');
  }
  // decisions.md section 5: nobody scans a site whose hostname is not verified in their workspace
  // (an IP address never is).
  if (op === 'security.scan') {
    // An address the URL standard cannot read (a port past 65535) names no host: invalid input.
    if (!URL.canParse(String(input.url))) return refuse('INVALID_INPUT');
    if (!f.verifiedHosts.get(r.caller.workspaceId)?.has(new URL(String(input.url)).hostname.toLowerCase())) return refuse('DOMAIN_NOT_VERIFIED');
  }
  return { refuse: [], accept: { op, body: { operationId, input } } };
}

/** Input fields naming a workspace voice by id (issue 37: speech.generate `voiceId`), written out here. */
const VOICE_FIELDS: Partial<Record<OperationId, string>> = { 'speech.generate': 'voiceId' };

/** Every media reference names media of the caller's workspace of an accepted kind. */
function mediaReferencesOk(f: Fixture, caller: Caller, op: OperationId, input: Record<string, unknown>): boolean {
  const media = f.mediaOf.get(caller.workspaceId)!;
  for (const field of findOperation(op)!.mediaFields) {
    let value = input[field.field];
    if (value === undefined) continue;
    // A reference inside each element of a list (edits[].mediaId): elements without it name none.
    if (field.within) value = (value as Record<string, unknown>[]).flatMap((e) => (e[field.within!] === undefined ? [] : [e[field.within!]]));
    for (const id of Array.isArray(value) ? value : [value]) {
      const kind = typeof id === 'string' ? media.get(id.toLowerCase()) : undefined;
      if (kind === undefined || !field.kinds.includes(kind)) return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------------------------
// One exchange: send, compare with the oracle, check the footprint, follow an admitted job.

interface Outcome {
  res: LightMyRequestResponse;
  body: any;
  code: string;
}

export async function exchange(ctx: TestContext, f: Fixture, r: Req, adjust: (e: Expected) => Expected = (e) => e): Promise<Outcome> {
  const what = describeReq(r);
  const expected = adjust(expectedFor(f, r));
  // A narrow key collects FORBIDDEN_OPERATION failures: space them out below the suspension threshold.
  if (r.caller.name === 'narrow') ctx.clock.advance(2_500);
  const before = await footprint(ctx);
  const res = await send(ctx, r);
  const body = checkEnvelope(res, what);
  const after = await footprint(ctx);
  const code: string = body.success ? `${res.statusCode}` : body.code;
  bump(f, `${r.endpoint} ${code}`);

  if (r.endpoint === 'estimates') assert.deepEqual(delta(before, after), {}, `Rule 2: an estimate writes nothing\n${what}`);
  if (!body.success) {
    assert.deepEqual(delta(before, after), {}, `a refused request (${code}) leaves no write behind\n${what}`);
    if (code === 'KEY_SUSPENDED' && r.caller.name === 'narrow') return { res, body, code };
    assert.ok(
      expected.refuse.includes(code),
      expected.refuse.length > 0 ? `expected ${expected.refuse.join(' or ')}, got ${res.statusCode} ${res.body.slice(0, 500)}\n${what}` : `a valid request is accepted, got ${res.statusCode} ${res.body.slice(0, 800)}\n${what}`,
    );
    if (code === 'INVALID_INPUT') {
      const errors = body.details?.errors;
      assert.ok(Array.isArray(errors) && errors.length > 0, `INVALID_INPUT lists its errors: ${res.body}`);
      for (const e of errors) assert.ok(typeof e.pointer === 'string' && e.pointer.startsWith('/input') && typeof e.message === 'string', `a JSON pointer into the body: ${JSON.stringify(e)}`);
    }
    return { res, body, code };
  }
  assert.ok(expected.accept, `expected ${expected.refuse.join(' or ')}, got ${res.statusCode} ${res.body.slice(0, 500)}\n${what}`);
  if (r.endpoint === 'estimates') checkEstimate(res, body, expected.accept.op, what);
  else await checkAdmittedRun(ctx, f, r, expected.accept, res, body, before, after, what);
  return { res, body, code };
}

function checkEstimate(res: LightMyRequestResponse, body: any, op: OperationId, what: string) {
  assert.equal(res.statusCode, 200, what);
  assert.equal(body.code, 'PUBLIC_TOOLS_ESTIMATE', what);
  const d = body.data;
  assert.deepEqual(Object.keys(d).sort(), ['estimatedCostMillicents', 'maximumCostMillicents', 'operationId', 'usagePoints'], what);
  assert.equal(d.operationId, op, what);
  assert.ok(Number.isSafeInteger(d.estimatedCostMillicents) && d.estimatedCostMillicents >= 0, what);
  assert.ok(Number.isSafeInteger(d.maximumCostMillicents) && d.maximumCostMillicents >= d.estimatedCostMillicents, `estimate ≤ maximum: ${res.body}\n${what}`);
  assert.equal(d.usagePoints, SPEC_OPERATION_WEIGHTS[op], what);
}

async function checkAdmittedRun(
  ctx: TestContext,
  f: Fixture,
  r: Req,
  expected: NonNullable<Expected['accept']>,
  res: LightMyRequestResponse,
  body: any,
  before: Footprint,
  after: Footprint,
  what: string,
): Promise<void> {
  const { op } = expected;
  assert.equal(body.code, 'PUBLIC_TOOLS_RUN', what);
  const d = body.data;
  assert.match(String(d.jobId), /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, what);
  const change = delta(before, after);
  assert.equal(change.jobs, 1, `an admitted run creates exactly one job: ${JSON.stringify(change)}\n${what}`);
  assert.equal(change.idempotency_keys, 1, `and one idempotency record: ${JSON.stringify(change)}\n${what}`);
  assert.equal(res.headers['idempotent-replayed'], undefined, what);

  // The stored input is the validated one: it satisfies the published schema.
  const row = await ctx.deps.db.selectFrom('jobs').select(['operation_id', 'input_json', 'workspace_id']).where('id', '=', d.jobId).executeTakeFirstOrThrow();
  assert.equal(row.operation_id, op, what);
  assert.equal(row.workspace_id, r.caller.scope, what);
  const stored = JSON.parse(row.input_json);
  assert.ok(f.validators.get(op)!(stored), `stored input satisfies the published schema: ${row.input_json.slice(0, 300)}\n${what}`);

  // Rules 2 and 3: the reservation is the bounded maximum the estimate of the same body names.
  const est = await exchange(ctx, f, jsonReq('estimates', r.caller, expected.body));
  const maximum = est.body.data.maximumCostMillicents as number;
  if (SYNC_OPS.has(op)) {
    assert.equal(res.statusCode, 200, `${op} is synchronous\n${what}`);
    assert.equal(d.kind, 'result', what);
    assert.ok(d.status === 'completed' || d.status === 'failed', what);
    assert.ok(Number.isSafeInteger(d.costMillicents) && d.costMillicents >= 0 && d.costMillicents <= maximum, `cost within the maximum ${maximum}: ${res.body}`);
    if (op === 'chat.generate') assert.equal(d.status, 'completed', `chat completes on the simulated provider: ${res.body}`);
  } else {
    assert.equal(res.statusCode, 202, `${op} is queued\n${what}`);
    assert.deepEqual(Object.keys(d).sort(), ['jobId', 'kind', 'maximumCostMillicents', 'status'], what);
    assert.equal(d.kind, 'job', what);
    assert.equal(d.status, 'pending', what);
    assert.equal(d.maximumCostMillicents, maximum, `the run reserves the estimate's maximum\n${what}`);
    const hold = await ctx.deps.db.selectFrom('credit_holds').select('amount_mc').where('job_id', '=', d.jobId).where('released_at_ms', 'is', null).execute();
    assert.deepEqual(hold.map((h) => Number(h.amount_mc)), [maximum], `one open hold of the maximum\n${what}`);
    await assertLedgerInvariants(ctx.deps, r.caller.scope);
    await drain(ctx);
  }
  // The job drains cleanly: terminal, within its bound, no hold left open.
  const job = await call(ctx, 'GET', `/v1/jobs/${d.jobId}`, { secret: r.caller.secret, workspaceId: r.caller.workspaceId });
  assert.equal(job.statusCode, 200, job.body);
  const snap = job.json().data;
  if (SYNC_OPS.has(op)) assert.equal(snap.status, d.status, what);
  else assert.equal(snap.status, 'completed', `the admitted job completes: ${job.body.slice(0, 500)}\n${what}`);
  assert.ok(snap.costMillicents <= snap.maximumCostMillicents, job.body.slice(0, 500));
  const open = await ctx.deps.db.selectFrom('credit_holds').select('id').where('job_id', '=', d.jobId).where('released_at_ms', 'is', null).execute();
  assert.equal(open.length, 0, `no hold left open after the job ended\n${what}`);
  await assertLedgerInvariants(ctx.deps, r.caller.scope);
  bump(f, `drained ${op}`);
}

// ---------------------------------------------------------------------------------------------
// Generators

/** Characters that upset naive string handling: NUL, bidi controls, lone surrogates, astral, combining. */
const HOSTILE_CHARS = ['a', 'Z', '0', ' ', '\u0000', '\u202e', '\u200f', '\u061c', '\ud800', '\udfff', '😀', 'é', 'e\u0301', '\ufeff', '\u2028', '"', '\\', '<', '\n', '\t', '%', '中', '\u001b'];
const hostileChar = fc.oneof({ weight: 3, arbitrary: fc.constantFrom('a', 'b', 'x', ' ', '1') }, { weight: 2, arbitrary: fc.constantFrom(...HOSTILE_CHARS) });

/** A string of about `n` code points cycling through a few generated characters (cheap for long strings). */
function textOf(length: fc.Arbitrary<number>): fc.Arbitrary<string> {
  return fc.tuple(fc.array(hostileChar, { minLength: 1, maxLength: 6 }), length).map(([cs, n]) => {
    const s = Array.from({ length: n }, (_, i) => cs[i % cs.length]).join('');
    return s.replaceAll('[sim:', '[sim ');
  });
}

/** Blocked IP-literal hosts only (loopback, private, link-local, metadata): never a connection. */
const BLOCKED_HOSTS = ['127.0.0.1', '10.1.2.3', '192.168.0.10', '169.254.169.254', '[::1]', '[fd00::7]', '0.0.0.0', '127.1', '2130706433', '0x7f000001', '[::ffff:127.0.0.1]'];

const urlPath = fc.oneof(
  fc.constant('/'),
  fc.stringMatching(/^\/[a-zA-Z0-9._~%!$&'()*+,;=:@/-]{0,40}$/),
  fc.stringMatching(/^\/[a-z]{0,10}\?[a-z0-9=&%]{0,30}$/),
);

/** The hostname tenant A verified (security.scan may target it) and one nobody verified. */
export const SCAN_TARGET = 'scan-target.example.com';
const scanTargetArb = fc
  .tuple(fc.constantFrom('https://', 'HTTPS://'), fc.constantFrom(SCAN_TARGET, 'Scan-Target.Example.COM', 'unverified.example.com', `www.${SCAN_TARGET}`), fc.constantFrom('', ':443', ':8443'), urlPath)
  .map(([scheme, host, port, path]) => `${scheme}${host}${port}${path}`);

function urlArb(httpsOnly: boolean): fc.Arbitrary<string> {
  return fc
    .tuple(fc.constantFrom(...(httpsOnly ? ['https://', 'HTTPS://'] : ['http://', 'https://', 'HtTp://'])), fc.constantFrom(...BLOCKED_HOSTS), fc.constantFrom('', ':80', ':8443', ':99999', ':0'), urlPath)
    .map(([scheme, host, port, path]) => `${scheme}${host}${port}${path}`);
}

const badUrl = fc.oneof(
  fc.constantFrom(
    'ftp://127.0.0.1/',
    'javascript:alert(1)',
    'file:///etc/passwd',
    '/etc/passwd',
    'http://',
    'http:///x',
    'http://user:pass@127.0.0.1/',
    'http://127.0.0.1/\u0000',
    'http://127.0.0.1/\u202e',
    'http://ex ample.com/',
    'data:text/html,<b>x</b>',
    'gopher://127.0.0.1:70/_',
    'http://127.0.0.1/' + 'a'.repeat(2100),
    'http://例え.テスト/',
    '',
  ),
  fc.string({ maxLength: 30 }),
  textOf(fc.integer({ min: 0, max: 50 })).map((s) => `http://127.0.0.1/${s}`),
);

export function mediaIdArb(f: Fixture, kinds: MediaKind[]): fc.Arbitrary<string> {
  const right = Object.entries(f.ownByKind).flatMap(([k, ids]) => (kinds.includes(k as MediaKind) ? ids : []));
  return fc.constantFrom(...right);
}

const JUNK_MEDIA: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom('/etc/passwd', '../../etc/passwd', 'file:///tmp/x.png', 's3://bucket/key.png', 'C:\\Windows\\win.ini', 'not-a-uuid', '', '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff'),
  fc.constant({ uploadId: 'up_123', path: '/tmp/upload.png' }),
  fc.constant({ url: 'http://127.0.0.1/x.png' }),
  fc.uuid(),
  fc.string({ maxLength: 40 }),
);

/** A media id near a valid one: someone else's, the wrong kind, nothing, other spellings. */
export function nearMediaId(f: Fixture, kinds: MediaKind[]): fc.Arbitrary<unknown> {
  const wrongKind = Object.entries(f.ownByKind).flatMap(([k, ids]) => (kinds.includes(k as MediaKind) ? [] : ids));
  return fc.oneof(
    fc.constantFrom(...f.foreignMedia),
    fc.constantFrom(...wrongKind),
    mediaIdArb(f, kinds).map((id) => id.toUpperCase()),
    mediaIdArb(f, kinds).map((id) => `urn:uuid:${id}`),
    mediaIdArb(f, kinds).map((id) => ` ${id}`),
    mediaIdArb(f, kinds).map((id) => `{${id}}`),
    mediaIdArb(f, kinds).map((id) => id.replaceAll('-', '')),
    JUNK_MEDIA,
  );
}

/** Values of every JSON type, including NaN-like strings and values at the edges of numbers. */
export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, false, 0, -1, 1.5, -0.5, 1e308, -1e308, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 'NaN', 'Infinity', '-Infinity', '1e309', '0x10', ' 5 ', '5', '', [], {}, [null], { '': '' }),
  fc.jsonValue({ maxDepth: 3 }),
  textOf(fc.integer({ min: 0, max: 20 })),
);

function mediaKindsOf(f: Fixture, op: OperationId, field: string): MediaKind[] | undefined {
  return findOperation(op)!.mediaFields.find((m) => m.field === field)?.kinds;
}

/** Values that satisfy `s` (mostly: the oracle decides). `field` names the input property (media fields). */
function validArb(f: Fixture, op: OperationId, s: Schema, field: string, depth = 0): fc.Arbitrary<unknown> {
  if (s.const !== undefined) return fc.constant(s.const);
  if (Array.isArray(s.enum)) return fc.constantFrom(...(s.enum as unknown[]));
  if (Array.isArray(s.oneOf) && s.type === undefined) return fc.oneof(...s.oneOf.map((b: Schema) => validArb(f, op, b, field, depth + 1)));
  switch (s.type) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = new Set<string>(s.required ?? []);
      const optional = Object.keys(props).filter((k) => !required.has(k));
      const anyOfSets: string[][] = Array.isArray(s.anyOf) ? s.anyOf.map((b: Schema) => (b.required ?? []) as string[]) : [[]];
      return fc
        .tuple(fc.subarray(optional), fc.constantFrom(...anyOfSets))
        .chain(([opt, anyReq]) => {
          const keys = [...new Set([...required, ...opt, ...anyReq])];
          return fc.record(Object.fromEntries(keys.map((k) => [k, validArb(f, op, props[k]!, depth === 0 ? k : field, depth + 1)])));
        });
    }
    case 'array': {
      const min = s.minItems ?? 0;
      const max = Math.min(s.maxItems ?? min + 4, min + 6);
      const item = validArb(f, op, s.items ?? {}, field, depth + 1);
      return s.uniqueItems
        ? fc.uniqueArray(item, { minLength: min, maxLength: max, selector: (v) => JSON.stringify(v) })
        : fc.array(item, { minLength: min, maxLength: max });
    }
    case 'string': {
      if (s.format === 'uuid') {
        const kinds = mediaKindsOf(f, op, field);
        return kinds ? mediaIdArb(f, kinds) : fc.uuid();
      }
      if (s.format === 'uri') {
        const pattern = new RegExp(s.pattern ?? '');
        const urls = urlArb(!pattern.test('http://x'));
        // security.scan: the workspace's verified hostname too, and one it has not verified.
        return (op === 'security.scan' ? fc.oneof(urls, scanTargetArb) : urls).filter((u) => pattern.test(u));
      }
      const min: number = s.minLength ?? 0;
      const max: number = s.maxLength ?? 200;
      return textOf(fc.oneof(fc.integer({ min, max: Math.min(max, min + 30) }), fc.constantFrom(min, max), fc.integer({ min, max })));
    }
    case 'integer':
      return fc.integer({ min: s.minimum ?? -1000, max: s.maximum ?? 1000 });
    case 'number': {
      const min = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : -1e6);
      const max = s.maximum ?? 1e6;
      return fc.double({ min, max, noNaN: true, noDefaultInfinity: true }).filter((x) => (s.exclusiveMinimum === undefined || x > s.exclusiveMinimum) && !Object.is(x, -0));
    }
    case 'boolean':
      return fc.boolean();
    default:
      return fc.jsonValue({ maxDepth: 1 });
  }
}

/** A value near `s`: just past its bounds, of the wrong type, hostile, or valid. */
function nearArb(f: Fixture, op: OperationId, s: Schema, field: string, depth = 0): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [junkValue, validArb(f, op, s, field, depth)];
  if (Array.isArray(s.oneOf) && s.type === undefined) options.push(...s.oneOf.map((b: Schema) => nearArb(f, op, b, field, depth + 1)));
  switch (s.type) {
    case 'object': {
      options.push(nearObject(f, op, s, field, depth));
      break;
    }
    case 'array': {
      const min: number = s.minItems ?? 0;
      const max: number = s.maxItems ?? 20;
      const item = validArb(f, op, s.items ?? {}, field, depth + 1);
      options.push(
        fc.array(item, { minLength: max + 1, maxLength: max + 3 }),
        fc.array(item, { minLength: Math.max(0, min - 1), maxLength: Math.max(0, min - 1) }),
        fc.array(item, { minLength: 1000, maxLength: 1000 }),
        fc.tuple(fc.array(item, { minLength: 1, maxLength: Math.max(1, max - 1) }), fc.nat()).map(([xs, i]) => [...xs, xs[i % xs.length]]),
        fc.tuple(fc.array(item, { minLength: min, maxLength: Math.max(min, Math.min(max, min + 3)) }), nearArb(f, op, s.items ?? {}, field, depth + 1), fc.nat()).map(([xs, bad, i]) => {
          const copy = [...xs];
          copy.splice(xs.length === 0 ? 0 : i % (xs.length + 1), 0, bad);
          return copy;
        }),
      );
      break;
    }
    case 'string': {
      if (s.format === 'uuid') {
        const kinds = mediaKindsOf(f, op, field);
        options.push(kinds ? nearMediaId(f, kinds) : JUNK_MEDIA);
        break;
      }
      if (s.format === 'uri') {
        options.push(badUrl, urlArb(false));
        break;
      }
      const min: number = s.minLength ?? 0;
      const max: number = s.maxLength ?? 200;
      options.push(
        textOf(fc.constantFrom(Math.max(0, min - 1), max + 1, max)),
        textOf(fc.constantFrom(100_000, 300_000)),
        fc.constantFrom(' ', '\u0000', '\ud800', '\udfff\ud800', '\u202e', '😀'.repeat(max), 'a'.repeat(max) + '\ud800', 'e\u0301'.repeat(Math.ceil(max / 2))),
      );
      if (Array.isArray(s.enum)) options.push(fc.constantFrom(...(s.enum as string[]).flatMap((e) => [e.toUpperCase(), ` ${e}`, `${e}\u0000`, `${e}x`])));
      break;
    }
    case 'integer':
    case 'number': {
      const lo: number | undefined = s.minimum ?? s.exclusiveMinimum;
      const hi: number | undefined = s.maximum;
      const edges: unknown[] = [0.5, -1, 1e21, Number.MIN_VALUE, -Number.MIN_VALUE];
      if (lo !== undefined) edges.push(lo - 1, lo - 0.001, lo, lo + 0.5);
      if (hi !== undefined) edges.push(hi + 1, hi + 0.001, hi, hi - 0.5);
      options.push(fc.constantFrom(...edges), fc.constantFrom(...edges).map(String));
      break;
    }
  }
  return fc.oneof(...options);
}

export const EXTRA_KEYS = ['constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__proto__', '__defineGetter__', 'then', 'Prompt', 'prompt ', 'media_id', 'url\u0000', '', 'provider', 'apiKey', 'path', 'uploadObject'];

/** Property names that are not in any schema: prototype names, near-misses, unicode, huge. */
const extraKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...EXTRA_KEYS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: textOf(fc.integer({ min: 1, max: 12 })) },
  { weight: 1, arbitrary: textOf(fc.constantFrom(101, 100_000)) },
);

export function defineOwn(o: Record<string, unknown>, k: string, v: unknown): Record<string, unknown> {
  // An own property even for "__proto__" (plain assignment would set the prototype instead).
  Object.defineProperty(o, k, { value: v, enumerable: true, writable: true, configurable: true });
  return o;
}

/** An object near `s`: a valid one with 1 to 3 of its properties dropped, replaced by near values, or added. */
export function nearObject(f: Fixture, op: OperationId, s: Schema, field: string, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const props = (s.properties ?? {}) as Record<string, Schema>;
  const names = Object.keys(props);
  type Mutation = { kind: 'drop'; key: string } | { kind: 'set'; key: string; value: unknown } | { kind: 'extra'; key: string; value: unknown };
  const mutation: fc.Arbitrary<Mutation> = fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(...names).map((key) => ({ kind: 'drop' as const, key })) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(...names).chain((key) => nearArb(f, op, props[key]!, depth === 0 ? key : field, depth + 1).map((value) => ({ kind: 'set' as const, key, value }))),
    },
    { weight: 1, arbitrary: fc.tuple(extraKey, junkValue).map(([key, value]) => ({ kind: 'extra' as const, key, value })) },
  );
  return fc.tuple(validArb(f, op, s, field, depth) as fc.Arbitrary<Record<string, unknown>>, fc.array(mutation, { minLength: 1, maxLength: 3 })).map(([base, ms]) => {
    const o: Record<string, unknown> = { ...base };
    for (const m of ms) {
      if (m.kind === 'drop') delete o[m.key];
      else defineOwn(o, m.key, m.value);
    }
    return o;
  });
}

export function validInputArb(f: Fixture, op: OperationId): fc.Arbitrary<Record<string, unknown>> {
  return validArb(f, op, f.schemas.get(op)!, '') as fc.Arbitrary<Record<string, unknown>>;
}

export function nearInputArb(f: Fixture, op: OperationId): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof({ weight: 2, arbitrary: validInputArb(f, op) }, { weight: 5, arbitrary: nearObject(f, op, f.schemas.get(op)!, '', 0) });
}

export const anyOp = fc.constantFrom(...OPERATION_IDS);

/**
 * A fixed input of `op` that `accept` takes, for the examples that make a property reach each
 * branch its coverage assertion names whatever the seed (generated cases come on top).
 */
export function pickInput(arb: fc.Arbitrary<Record<string, unknown>>, accept: (input: Record<string, unknown>) => boolean): Record<string, unknown> {
  // One value per seed, so only as many are made as needed (a sample of hundreds of near inputs
  // of chat.generate takes seconds).
  for (let seed = 1; seed <= 200; seed++) {
    const [value] = fc.sample(arb, { numRuns: 1, seed });
    if (value !== undefined && accept(value)) return value;
  }
  assert.fail('a fixed example exists');
}

// ---------------------------------------------------------------------------------------------
// Fixture

/**
 * The tenants, keys, media and published contracts of the fuzzers. `mode` test: every key is a
 * test key (simulated work; `credits` are the test balances), rows are read under the test twins'
 * ids (Caller.scope), and hostnames are verified in the live workspaces, as both modes share them.
 */
export async function setUp(ctx: TestContext, mode: Mode = 'live'): Promise<Fixture> {
  const a = await seedTenant(ctx.deps, { plan: 'pro', credits: 1_000_000_000_000, mode });
  const b = await seedTenant(ctx.deps, { plan: 'pro', credits: 1_000_000_000_000, mode });
  const poor = await seedTenant(ctx.deps, { plan: 'pro', credits: POOR_CREDITS, mode });
  const capped = await seedTenant(ctx.deps, { plan: 'pro', credits: 1_000_000_000_000, mode, key: { budgets: { dailyMillicents: CAPPED_DAILY_BUDGET } } });
  for (const t of [a, b, poor, capped]) {
    const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000_000, pointsPerMonth: 1_000_000_000_000, activeKeys: 1_000_000 } });
    assert.equal(res.statusCode, 200, res.body);
  }
  const narrow = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { operations: NARROW_OPERATIONS, mode });
  const uploaded = async (t: Tenant, bytes: Buffer, type: string) => {
    const res = await upload(ctx, t, bytes, { type, filename: 'f' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.id as string;
  };
  const ownByKind: Record<MediaKind, string[]> = {
    image: [await uploaded(a, await png(), 'image/png'), await uploaded(a, await png(8, 8), 'image/png')],
    audio: [await uploaded(a, wav(), 'audio/wav'), await uploaded(a, wav(2000), 'audio/wav')],
    video: [await uploaded(a, mp4(), 'video/mp4')],
    model: [await uploaded(a, glb(), 'model/gltf-binary')],
  };
  const foreignMedia = [await uploaded(b, await png(), 'image/png'), await uploaded(b, wav(), 'audio/wav'), await uploaded(b, mp4(), 'video/mp4'), await uploaded(b, glb(), 'model/gltf-binary')];
  const mediaOf = new Map<string, Map<string, MediaKind>>();
  const kinds = await ctx.deps.db.selectFrom('media').select(['id', 'kind', 'workspace_id']).execute();
  // By the workspace a caller names; a test key's media are only its mode's (the live workspace's
  // media of another mode never count as its own).
  for (const m of kinds) {
    if (m.workspace_id !== scopeFor(publicWorkspaceId(m.workspace_id), mode)) continue;
    const ws = publicWorkspaceId(m.workspace_id);
    if (!mediaOf.has(ws)) mediaOf.set(ws, new Map());
    mediaOf.get(ws)!.set(m.id, m.kind as MediaKind);
  }
  for (const [kind, ids] of Object.entries(ownByKind)) for (const id of ids) assert.equal(mediaOf.get(a.workspace.id)!.get(id), kind, 'uploads have the kinds the generators assume');
  mediaOf.set(poor.workspace.id, new Map());
  mediaOf.set(capped.workspace.id, new Map());

  // The input contracts as published by GET /v1/tools.
  const tools = await call(ctx, 'GET', '/v1/tools', { secret: a.secret, workspaceId: a.workspace.id });
  assert.equal(tools.statusCode, 200, tools.body);
  const schemas = new Map<OperationId, Schema>();
  for (const tool of tools.json().data.items) for (const o of tool.operations) schemas.set(o.operationId, o.inputSchema);
  assert.deepEqual([...schemas.keys()].sort(), [...OPERATION_IDS].sort(), 'GET /v1/tools publishes all 14 operations');
  const validators = new Map<OperationId, ValidateFunction>();
  for (const [op, schema] of schemas) {
    validators.set(op, oracleAjv.compile(structuredClone(schema)));
    // Media references are the uuid-formatted fields of the published schema, or a uuid property
    // of the objects a list field holds (video.edit's concat step: edits[].mediaId).
    const uuidFields = Object.entries((schema.properties ?? {}) as Record<string, Schema>)
      .flatMap(([k, p]): string[] => {
        if (p.format === 'uuid' || p.items?.format === 'uuid') return [k];
        const branches: Schema[] = p.items ? (Array.isArray(p.items.oneOf) ? p.items.oneOf : [p.items]) : [];
        const inner = [...new Set(branches.flatMap((b) => Object.entries((b.properties ?? {}) as Record<string, Schema>).filter(([, q]) => q.format === 'uuid').map(([name]) => name)))];
        return inner.map((name) => `${k}[].${name}`);
      })
      .sort();
    const references = [...findOperation(op)!.mediaFields.map((m) => (m.within ? `${m.field}[].${m.within}` : m.field)), ...(VOICE_FIELDS[op] ? [VOICE_FIELDS[op]!] : [])];
    assert.deepEqual(references.sort(), uuidFields, `${op}: media fields (and the voice field)`);
  }

  // Tenant A proves it controls SCAN_TARGET (the operator's word), so its scans of it are admitted.
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${a.workspace.id}/domains`, { hostname: SCAN_TARGET })).statusCode, 200);
  assert.equal((await admin(ctx, `/admin/v1/workspaces/${a.workspace.id}/domains/${SCAN_TARGET}/verify`, { method: 'operator' })).statusCode, 200);
  const verifiedHosts = new Map([[a.workspace.id, new Set([SCAN_TARGET])]]);

  const caller = (name: Caller['name'], secret: string, t: Tenant, operations: readonly string[]): Caller => ({ name, secret, workspaceId: t.workspace.id, scope: scopeFor(t.workspace.id, mode), operations });
  return {
    a,
    b,
    callers: {
      a: caller('a', a.secret, a, OPERATION_IDS),
      b: caller('b', b.secret, b, OPERATION_IDS),
      narrow: caller('narrow', narrow.secret, a, NARROW_OPERATIONS),
      poor: caller('poor', poor.secret, poor, OPERATION_IDS),
      capped: caller('capped', capped.secret, capped, OPERATION_IDS),
    },
    poor,
    capped,
    schemas,
    validators,
    mediaOf,
    ownByKind,
    foreignMedia,
    verifiedHosts,
    stats: new Map(),
  };
}

export function report(t: { diagnostic(msg: string): void }, f: Fixture): void {
  t.diagnostic(JSON.stringify(Object.fromEntries([...f.stats].sort())));
}

export function seen(f: Fixture, key: string): number {
  return f.stats.get(key) ?? 0;
}

export async function ledgersHold(ctx: TestContext, f: Fixture): Promise<void> {
  await assertLedgerInvariants(ctx.deps, scopeOf(f.a));
  await assertLedgerInvariants(ctx.deps, scopeOf(f.b));
  await assertLedgerInvariants(ctx.deps, scopeOf(f.poor));
  await assertLedgerInvariants(ctx.deps, scopeOf(f.capped));
  const open = await ctx.deps.db.selectFrom('credit_holds').select('id').where('released_at_ms', 'is', null).execute();
  assert.equal(open.length, 0, 'every admitted job drained: no hold left open');
  const active = await ctx.deps.db.selectFrom('jobs').select(['id', 'status']).where('status', 'in', ['pending', 'processing']).execute();
  assert.deepEqual(active, [], 'no job left pending or processing');
}

// ---------------------------------------------------------------------------------------------


export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v !== null && typeof v === 'object') return `{${Object.keys(v).sort().map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`).join(',')}}`;
  return JSON.stringify(v);
}

/** The same object with its keys in reverse order (recursively). */
export function reorder(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(reorder);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).reverse().map(([k, x]) => [k, reorder(x)]));
  return v;
}
