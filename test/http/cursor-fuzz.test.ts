/**
 * Property tests of the paging endpoints' query strings, cursors and path ids (spec Size and
 * paging bounds, Rule 6, Errors 4-5; decisions.md section 1 "list endpoints … opaque,
 * tamper-proof cursors; a forged or foreign cursor gives 400 INVALID_CURSOR", GET /v1/events,
 * and section 3's error codes, 404 NOT_FOUND for another workspace's resource).
 *
 * Two tenants A and B, each with a test key (simulated work, the test balance), each hold jobs
 * (synchronous, queued with multi-page output, failed, cancelled), credit allocations, ledger
 * entries, media, events and two webhooks with deliveries, all in their workspaces' test twins. The paging endpoints (GET /v1/jobs, /v1/balance, /v1/transactions, /v1/media,
 * /v1/events, /v1/webhooks/{id}/deliveries, /v1/jobs/{id}/output) are walked once with small
 * pages to collect every cursor the service issues; the properties then throw hostile query
 * strings, tampered and misplaced cursors and hostile path ids at them. For every response:
 * never a 5xx; every refusal is the error envelope with a code registered in ERROR_REGISTRY and
 * its registered status, never 403 (the caller's key has every scope); a 200 never carries an id
 * of the other tenant; and wherever the outcome is determined (a well-formed query), it is
 * exactly the expected one: the expected page, or the expected error code.
 *
 * CURSOR_FUZZ_RUNS (default 300) scales the number of runs of every property.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { sql } from 'kysely';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_REGISTRY, type ErrorCode } from '../../src/http/errors.js';
import { specStatusesOf } from '../support/spec-errors.js';
import { QUERY_KEY_PARAMS } from '../../src/modules/auth/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { EVENT_TYPES } from '../../src/modules/events/store.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { drain, run } from '../support/jobs.js';
import { verifyHost } from '../support/webhook-hosts.js';
import { png, upload } from '../support/media.js';
import { waitUntil } from '../support/wait.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { swapOneCase } from '../support/api-fuzz.js';

const RUNS = Math.max(1, Number(process.env.CURSOR_FUZZ_RUNS ?? 300));
/** Runs of one property: a share of CURSOR_FUZZ_RUNS. */
const runs = (share: number) => Math.max(1, Math.round(RUNS * share));

const KEY_PARAM_NAMES = new Set(QUERY_KEY_PARAMS.map((p) => p.toLowerCase()));
const SECRET_IN_TEXT = /wask_[A-Za-z0-9_-]{43}/;
const B64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** What ajv-formats accepts as `format: "uuid"` (the path parameter schema). */
const UUID_FORMAT = /^(?:urn:uuid:)?[0-9a-f]{8}-(?:[0-9a-f]{4}-){3}[0-9a-f]{12}$/i;
const CHAT = { messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 50 };
const MULTI_PAGE = { prompt: 'a long tune [sim:outputBytes=20000]', durationSeconds: 5 };

// ---------------------------------------------------------------------------------------------
// Fixture: two tenants with something on every list, and every cursor the service issued.

type Kind = 'jobs' | 'balance' | 'transactions' | 'media' | 'events' | 'deliveries' | 'output';

interface Side {
  name: 'A' | 'B';
  t: Tenant;
  /** Two webhooks: every event type, and media.created only. */
  webhooks: [string, string];
  /** Two completed jobs whose complete output spans several pages. */
  outputJobs: [string, string];
  /** A third such job, whose stored result the 409 test rewrites. */
  changingJob: string;
  /** Jobs whose output is one page: failed, cancelled, synchronous, still pending. */
  singlePageJobs: string[];
  /** Ids of each list target (by targetKey), in the list's order. */
  refs: Map<string, string[]>;
  eventTypes: Map<string, string>;
  /** totalBytes of each output job's document. */
  outputTotals: Map<string, number>;
  /** Every id of this tenant: workspace, user, key, jobs, media, events, ledger, allocations, webhooks, deliveries. */
  ids: string[];
}

interface Target {
  kind: Kind;
  owner: Side;
  /** The webhook (deliveries) or job (output) in the path. */
  sub: string | null;
}

interface Issued {
  target: Target;
  cursor: string;
  /** Where the cursor continues: items already listed, or the byte offset of the output page. */
  at: number;
}

interface Fixture {
  a: Side;
  b: Side;
  /** Every cursor issued while walking the lists (list cursors never expire). */
  listCursors: Issued[];
  /** Output cursors of the current fake-clock time (refreshed by freshOutputCursors). */
  outputCursors: Issued[];
}

function targetKey(t: Target): string {
  return `${t.kind}|${t.owner.name}|${t.sub ?? ''}`;
}

function targetPath(t: Target): string {
  switch (t.kind) {
    case 'deliveries':
      return `/v1/webhooks/${t.sub}/deliveries`;
    case 'output':
      return `/v1/jobs/${t.sub}/output`;
    default:
      return `/v1/${t.kind}`;
  }
}

function targetsOf(side: Side): Target[] {
  return [
    ...(['jobs', 'balance', 'transactions', 'media', 'events'] as const).map((kind) => ({ kind, owner: side, sub: null })),
    ...side.webhooks.map((sub) => ({ kind: 'deliveries' as const, owner: side, sub })),
    ...[...side.outputJobs, ...side.singlePageJobs].map((sub) => ({ kind: 'output' as const, owner: side, sub })),
  ];
}

const other = (f: Fixture, side: Side): Side => (side === f.a ? f.b : f.a);
const allowedParams = (kind: Kind): string[] => (kind === 'output' ? ['cursor'] : kind === 'events' ? ['limit', 'cursor', 'types'] : ['limit', 'cursor']);
const maxCursorLength = (kind: Kind): number => (kind === 'output' ? 1024 : 200);

function get(ctx: TestContext, caller: Side, url: string): Promise<LightMyRequestResponse> {
  return ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${caller.t.secret}`, 'x-service-workspace': caller.t.workspace.id } });
}

function outputPage(ctx: TestContext, caller: Side, jobId: string, cursor?: string): Promise<LightMyRequestResponse> {
  return get(ctx, caller, `/v1/jobs/${jobId}/output${cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`}`);
}

async function column(rows: Promise<{ id: string }[]>): Promise<string[]> {
  return (await rows).map((r) => r.id);
}

/** A webhook of the tenant's mode on a freshly verified host of its workspace, created through the API; returns its id. */
async function createWebhookOf(ctx: TestContext, t: Tenant, eventTypes: string[]): Promise<string> {
  const url = `https://${await verifyHost(ctx, t.workspace.id)}/hooks`;
  const res = await call(ctx, 'POST', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id, body: { url, eventTypes } });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data.webhook.id;
}

/** A tenant with jobs of every outcome, allocations, ledger entries, media, events and two webhooks with deliveries. */
async function buildSide(ctx: TestContext, name: 'A' | 'B'): Promise<Side> {
  const t = await seedTenant(ctx.deps, { credits: 50_000_000, mode: 'test' });
  const ws = t.workspace.id;
  const settings = await admin(ctx, `/admin/v1/workspaces/${ws}/settings`, {
    limits: { pointsPerMinute: 10_000_000, pointsPerMonth: 1_000_000_000 },
    // Above the balance: the first hold raises a credits.low alert, so the feed holds an alert too.
    lowCreditsMillicents: 100_000_000,
  });
  assert.equal(settings.statusCode, 200, settings.body);
  for (const amount of [1_111, 2_222, 3_333]) await grantCredits(ctx.deps, ws, { amountMillicents: amount, mode: 'test' });
  const hookAll = await createWebhookOf(ctx, t, [...EVENT_TYPES]);
  const hookMedia = await createWebhookOf(ctx, t, ['media.created']);

  const chats: string[] = [];
  for (let i = 0; i < 5; i++) {
    const res = await run(ctx, t, 'chat.generate', CHAT);
    assert.equal(res.statusCode, 200, res.body);
    chats.push(res.json().data.jobId);
  }
  const queued: string[] = [];
  for (const input of [MULTI_PAGE, MULTI_PAGE, MULTI_PAGE, { prompt: 'doomed [sim:fail=SIM_FAILED]', durationSeconds: 5 }, { prompt: 'never mind', durationSeconds: 5 }]) {
    const res = await run(ctx, t, 'music.generate', input);
    assert.equal(res.statusCode, 202, res.body);
    queued.push(res.json().data.jobId);
  }
  const cancelled = await call(ctx, 'POST', `/v1/jobs/${queued[4]}/cancel`, { secret: t.secret, workspaceId: ws });
  assert.equal(cancelled.statusCode, 200, cancelled.body);
  for (let i = 0; i < 3; i++) {
    const res = await upload(ctx, t, await png(8 + i, 8));
    assert.equal(res.statusCode, 200, res.body);
  }
  while ((await drain(ctx)) > 0);

  const side: Side = {
    name,
    t,
    webhooks: [hookAll, hookMedia],
    outputJobs: [queued[0]!, queued[1]!],
    changingJob: queued[2]!,
    singlePageJobs: [queued[3]!, queued[4]!, chats[0]!],
    refs: new Map(),
    eventTypes: new Map(),
    outputTotals: new Map(),
    ids: [],
  };
  return side;
}

/** Adds a job left pending (after every drain), then reads the reference lists and ids of `side`. */
async function finishSide(ctx: TestContext, side: Side): Promise<void> {
  const db = ctx.deps.db;
  const t = side.t;
  // The rows of a test key's work are stored under the workspace's test twin.
  const ws = scopeOf(t);
  const pending = await run(ctx, t, 'music.generate', { prompt: 'still waiting', durationSeconds: 5 });
  assert.equal(pending.statusCode, 202, pending.body);
  side.singlePageJobs.push(pending.json().data.jobId);
  const listTarget = (kind: Kind, sub: string | null = null) => targetKey({ kind, owner: side, sub });
  side.refs.set(listTarget('jobs'), await column(db.selectFrom('jobs').select('id').where('workspace_id', '=', ws).orderBy('id', 'desc').execute()));
  side.refs.set(
    listTarget('balance'),
    await column(db.selectFrom('credit_allocations').select('id').where('workspace_id', '=', ws).where('remaining_mc', '>', 0).orderBy('id', 'asc').execute()),
  );
  side.refs.set(listTarget('transactions'), await column(db.selectFrom('credit_transactions').select('id').where('workspace_id', '=', ws).orderBy('id', 'desc').execute()));
  side.refs.set(listTarget('media'), await column(db.selectFrom('media').select('id').where('workspace_id', '=', ws).orderBy('id', 'desc').execute()));
  // Feed order: writing transaction, then id, on PostgreSQL; id on SQLite (feed-store.ts).
  const events =
    ctx.deps.caps.dialect === 'postgres'
      ? (await sql<{ id: string; type: string }>`select id, type from events where workspace_id = ${ws} order by tx_id, id`.execute(db)).rows
      : await db.selectFrom('events').select(['id', 'type']).where('workspace_id', '=', ws).orderBy('id').execute();
  side.refs.set(listTarget('events'), events.map((e) => e.id));
  for (const e of events) side.eventTypes.set(e.id, e.type);
  for (const hook of side.webhooks) {
    side.refs.set(
      listTarget('deliveries', hook),
      await column(db.selectFrom('webhook_deliveries').select('id').where('workspace_id', '=', ws).where('webhook_id', '=', hook).orderBy('id', 'desc').execute()),
    );
  }
  for (const [key, ids] of side.refs) assert.ok(ids.length >= 4, `${key} has items to page through (${ids.length})`);
  assert.deepEqual(
    new Set(side.eventTypes.values()),
    new Set(['job.completed', 'job.failed', 'job.cancelled', 'media.created', 'credits.low']),
    'every job and media event type, and an alert, is in the feed',
  );

  const allocations = await column(db.selectFrom('credit_allocations').select('id').where('workspace_id', '=', ws).execute());
  side.ids = [t.workspace.id, t.user.id, t.key.id, ...allocations, ...[...side.refs.values()].flat(), ...side.webhooks];
}

/** Waits until GET /v1/events lists every event of the side (a state wait: see fixture()). */
async function feedShowsAll(ctx: TestContext, side: Side): Promise<void> {
  const expected = side.refs.get(targetKey({ kind: 'events', owner: side, sub: null }))!.length;
  await waitUntil(
    async () => (await get(ctx, side, '/v1/events?limit=100')).json().data.items.length as number,
    (n) => n === expected,
    `the feed of ${side.name} shows its ${expected} events`,
  );
}

/** Walks every list target of `side` with pages of 2, checking each page; returns the cursors issued. */
async function walkLists(ctx: TestContext, f: Fixture, side: Side): Promise<Issued[]> {
  const issued: Issued[] = [];
  for (const target of targetsOf(side).filter((t) => t.kind !== 'output')) {
    const ref = side.refs.get(targetKey(target))!;
    let cursor: string | undefined;
    let seen = 0;
    for (;;) {
      const res = await get(ctx, side, `${targetPath(target)}?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
      const data = assertPage(f, target, side, res, { at: seen, limit: 2, types: null });
      seen += pageItems(target, data).length;
      if (data.nextCursor === null) break;
      issued.push({ target, cursor: data.nextCursor, at: seen });
      if (target.kind === 'events' && !data.hasMore) break;
      cursor = data.nextCursor;
    }
    assert.equal(seen, ref.length, `${targetKey(target)}: every item listed`);
  }
  return issued;
}

/** Reads the complete output of every output job of both tenants now; the cursors issued (Rule 6 verified on the way). */
async function freshOutputCursors(ctx: TestContext, f: Fixture): Promise<Issued[]> {
  const issued: Issued[] = [];
  for (const side of [f.a, f.b]) {
    for (const target of targetsOf(side).filter((t) => t.kind === 'output')) {
      const parts: Buffer[] = [];
      let cursor: string | undefined;
      let digest: string | undefined;
      for (;;) {
        const res = await outputPage(ctx, side, target.sub!, cursor);
        assert.equal(res.statusCode, 200, res.body);
        const data = res.json().data;
        assert.equal(data.offsetBytes, Buffer.concat(parts).length, 'offsetBytes is the sum of the fragments so far');
        if (digest !== undefined) assert.equal(data.sha256, digest, 'one document per read');
        digest = data.sha256;
        parts.push(Buffer.from(data.fragment, 'utf8'));
        side.outputTotals.set(target.sub!, data.totalBytes);
        if (data.nextCursor === null) break;
        cursor = data.nextCursor as string;
        issued.push({ target, cursor, at: Buffer.concat(parts).length });
      }
      const doc = Buffer.concat(parts);
      assert.equal(doc.length, side.outputTotals.get(target.sub!));
      assert.equal(createHash('sha256').update(doc).digest('hex'), digest);
      if (side.outputJobs.includes(target.sub!)) assert.ok(parts.length >= 3, 'the output spans several pages');
      else assert.equal(parts.length, 1);
      JSON.parse(doc.toString('utf8'));
    }
  }
  return issued;
}

const fixtures = new WeakMap<TestContext, Promise<Fixture>>();

function fixture(ctx: TestContext): Promise<Fixture> {
  let f = fixtures.get(ctx);
  if (!f) {
    f = (async () => {
      const a = await buildSide(ctx, 'A');
      const b = await buildSide(ctx, 'B');
      await finishSide(ctx, a);
      await finishSide(ctx, b);
      // On PostgreSQL the feed shows an event once no older transaction of the database is open
      // (feed-store.ts): the service's own background work may still hold one for a moment.
      for (const side of [a, b]) await feedShowsAll(ctx, side);
      const fx: Fixture = { a, b, listCursors: [], outputCursors: [] };
      fx.listCursors = [...(await walkLists(ctx, fx, a)), ...(await walkLists(ctx, fx, b))];
      fx.outputCursors = await freshOutputCursors(ctx, fx);
      return fx;
    })();
    fixtures.set(ctx, f);
  }
  return f;
}

/** The fixture with output cursors minted at the current fake-clock time. */
async function freshFixture(ctx: TestContext): Promise<Fixture> {
  const f = await fixture(ctx);
  f.outputCursors = await freshOutputCursors(ctx, f);
  return f;
}

const allIssued = (f: Fixture): Issued[] => [...f.listCursors, ...f.outputCursors];

// ---------------------------------------------------------------------------------------------
// Expected outcomes and response checks

interface PageSpec {
  at: number;
  limit: number;
  types: string[] | null;
}
type Outcome = { code: ErrorCode } | { page: PageSpec };

/**
 * The outcomes a well-formed query string (decoded name/value pairs) may have on `target` for its
 * owner: the schema's 400 INVALID_REQUEST (unknown or repeated parameter, limit not an integer in
 * 1..100, cursor or types of a length out of bounds), an unknown event type (400
 * INVALID_REQUEST), a cursor not issued for exactly this list, workspace and webhook or job (400
 * INVALID_CURSOR), else the page it names. A limit must be written in plain decimal digits
 * ("1e1", "0x10", " 5", "05" are 400: docs/decisions.md "Integers in a query or path").
 */
function expectedOutcomes(f: Fixture, target: Target, pairs: [string, string][]): Outcome[] {
  if (pairs.some(([k, v]) => KEY_PARAM_NAMES.has(k.toLowerCase()) || SECRET_IN_TEXT.test(k) || SECRET_IN_TEXT.test(v))) return [{ code: 'UNAUTHENTICATED' }];
  const invalid: Outcome[] = [{ code: 'INVALID_REQUEST' }];
  const values = new Map<string, string[]>();
  for (const [k, v] of pairs) values.set(k, [...(values.get(k) ?? []), v]);
  for (const [k, vs] of values) if (!allowedParams(target.kind).includes(k) || vs.length > 1) return invalid;
  let limit = 25;
  const limitValue = values.get('limit')?.[0];
  if (limitValue !== undefined) {
    if (!/^(?:[1-9]\d?|100)$/.test(limitValue)) return invalid;
    limit = Number(limitValue);
  }
  const cursor = values.get('cursor')?.[0];
  if (cursor !== undefined && ([...cursor].length < 1 || [...cursor].length > maxCursorLength(target.kind))) return invalid;
  const typesValue = values.get('types')?.[0];
  let types: string[] | null = null;
  if (typesValue !== undefined) {
    if ([...typesValue].length < 1 || [...typesValue].length > 200) return invalid;
    types = typesValue.split(',').map((s) => s.trim());
    if (types.some((n) => !(EVENT_TYPES as readonly string[]).includes(n))) return invalid;
  }
  let at = 0;
  if (cursor !== undefined) {
    const issued = allIssued(f).find((i) => i.cursor === cursor);
    if (!issued || targetKey(issued.target) !== targetKey(target)) return [{ code: 'INVALID_CURSOR' }];
    at = issued.at;
  }
  return [{ page: { at, limit, types } }];
}

/**
 * Every response: never a 5xx, a request id, JSON; a refusal is the error envelope with a
 * registered code and its registered status, never 403; a 200 never carries an id of the other
 * tenant. Returns the code, or 'OK'.
 */
function assertContract(f: Fixture, caller: Side, res: LightMyRequestResponse, allowId?: string): string {
  assert.ok(res.statusCode < 500, `no 5xx: ${res.statusCode} ${res.body.slice(0, 500)}`);
  assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = res.json();
  for (const id of other(f, caller).ids) {
    if (id !== allowId) assert.equal(res.body.includes(id), false, `response to ${caller.name} carries ${other(f, caller).name}'s id ${id}: ${res.body.slice(0, 300)}`);
  }
  if (res.statusCode === 200) {
    assert.equal(body.success, true);
    return 'OK';
  }
  assert.equal(body.success, false, res.body);
  assert.ok(Object.hasOwn(ERROR_REGISTRY, body.code), `registered code: ${body.code}`);
  assert.equal(res.statusCode, ERROR_REGISTRY[body.code as ErrorCode][0], `registered status of ${body.code}: ${res.statusCode}`);
  const spec = specStatusesOf(body.code);
  assert.ok(!spec || spec.includes(res.statusCode), `decisions.md section 3 gives ${body.code} ${spec?.join('/')}, not ${res.statusCode}`);
  assert.notEqual(res.statusCode, 403, `never 403 for the caller's own key: ${res.body}`);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.requestId, res.headers['x-request-id']);
  assert.equal(body.data, undefined, 'a refusal carries no data');
  return body.code as string;
}

function pageItems(target: Target, data: any): { id: string }[] {
  return target.kind === 'balance' ? data.allocations : data.items;
}

/** A 200 of `target` for `caller` is exactly the page `spec` names; returns its data. */
function assertPage(f: Fixture, target: Target, caller: Side, res: LightMyRequestResponse, spec: PageSpec): any {
  assert.equal(assertContract(f, caller, res), 'OK', `expected a page of ${targetKey(target)}: ${res.statusCode} ${res.body.slice(0, 300)}`);
  const data = res.json().data;
  const side = target.owner;
  if (target.kind === 'output') {
    assert.equal(data.jobId, target.sub);
    assert.equal(data.offsetBytes, spec.at, 'the page the cursor names');
    assert.equal(data.totalBytes, side.outputTotals.get(target.sub!));
    const length = Buffer.byteLength(data.fragment, 'utf8');
    assert.ok(length > 0 && length <= 8192, `fragment of ${length} bytes`);
    assert.equal(data.nextCursor === null, data.offsetBytes + length === data.totalBytes, 'nextCursor null on the last fragment only');
    return data;
  }
  let rest = side.refs.get(targetKey(target))!.slice(spec.at);
  if (spec.types) rest = rest.filter((id) => spec.types!.includes(side.eventTypes.get(id)!));
  assert.deepEqual(
    pageItems(target, data).map((i) => i.id),
    rest.slice(0, spec.limit),
    `${targetKey(target)} from ${spec.at}, limit ${spec.limit}${spec.types ? `, types ${spec.types}` : ''}`,
  );
  if (target.kind === 'events') {
    assert.equal(typeof data.nextCursor, 'string', 'the feed cursor is never null');
    assert.equal(data.hasMore, rest.length > spec.limit);
  } else {
    assert.equal(data.nextCursor !== null, rest.length > spec.limit, 'nextCursor exactly when more items follow');
  }
  if (target.kind === 'deliveries') assert.equal(data.hasMore, data.nextCursor !== null);
  if (target.kind === 'balance') assert.equal(data.workspaceId, side.t.workspace.id);
  return data;
}

/** Checks `res` against the expected outcomes of a well-formed query; returns the code or 'OK'. */
function assertOutcome(f: Fixture, target: Target, res: LightMyRequestResponse, outcomes: Outcome[], what: string): string {
  const code = assertContract(f, target.owner, res);
  if (code === 'OK') {
    const page = outcomes.find((o): o is { page: PageSpec } => 'page' in o);
    assert.ok(page, `${what}: expected ${JSON.stringify(outcomes)}, got 200`);
    assertPage(f, target, target.owner, res, page.page);
  } else {
    const codes = outcomes.flatMap((o) => ('code' in o ? [o.code] : []));
    assert.ok(codes.includes(code as ErrorCode), `${what}: expected ${JSON.stringify(outcomes)}, got ${res.statusCode} ${res.body.slice(0, 300)}`);
  }
  return code;
}

// ---------------------------------------------------------------------------------------------
// Generators

/** Strings a hostile client might send: ASCII, any code point, control characters, shapes of cursors, huge. */
const hostileString: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{0,120}\.[A-Za-z0-9_=-]{0,30}$/) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '', ' ', '.', '..', '...', 'null', 'undefined', 'true', '[]', '{}', '[object Object]', '%', '%%', '%00', '%2e', '\u0000', '\n', '\r\n',
      'é', '😀', '\u202e', '\ufeff', 'a'.repeat(200), 'a'.repeat(201), 'a'.repeat(1024), 'a'.repeat(1025), '-1', '0', '1e309', "'; drop table jobs; --",
    ),
  },
  { weight: 1, arbitrary: fc.tuple(fc.string({ minLength: 1, maxLength: 4 }), fc.integer({ min: 150, max: 6000 })).map(([s, n]) => s.repeat(Math.ceil(n / s.length)).slice(0, n)) },
);

const limitValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 1, max: 100 }).map(String) },
  { weight: 2, arbitrary: fc.oneof(fc.integer({ min: -5, max: 0 }), fc.integer({ min: 101, max: 1_000_000 }), fc.integer()).map(String) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '', ' ', '0', '-0', '1.5', '2.0', '1e1', '1e2', '1e3', '0x10', '0b11', '0o7', '+5', ' 5', '5 ', '05', '007', '\u0663', '\uff15', 'NaN',
      'Infinity', '-Infinity', 'null', 'true', '[]', '1,2', '1;2', '%31', '9'.repeat(400), '100.0000000000000001', '1e-7', '9007199254740993',
    ),
  },
  { weight: 1, arbitrary: fc.double().map(String) },
  { weight: 1, arbitrary: hostileString },
);

const typesValue: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(fc.array(fc.constantFrom(...EVENT_TYPES), { minLength: 1, maxLength: 5 }), fc.constantFrom(',', ', ', ' ,', ' , '))
      .map(([names, sep]) => names.join(sep)),
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '', ',', ' ', 'job.completed,', ',job.failed', 'job.completed,,job.failed', 'JOB.COMPLETED', 'job.*', '*', 'job', 'media.created ', ' job.cancelled',
      'job.completed\u0000', 'job.completed;job.failed', 'job.completed%2Cjob.failed', `${'job.completed,'.repeat(14)}job.failed`,
    ),
  },
  { weight: 1, arbitrary: hostileString },
);

const MUTATIONS = [
  'flipPayloadBit',
  'flipMacBit',
  'substituteChar',
  'truncate',
  'extend',
  'caseSwap',
  'padPayload',
  'padMac',
  'standardBase64',
  'dropDot',
  'doubleDot',
  'swapParts',
  'spliceMac',
  'respaceJson',
  'forgeForeignPosition',
  'whitespace',
] as const;
type Mutation = (typeof MUTATIONS)[number];

function flipBit(part: string, n: number): string {
  const bytes = Buffer.from(part, 'base64url');
  if (bytes.length === 0) return `${part}A`;
  const bit = n % (bytes.length * 8);
  bytes[bit >> 3] = bytes[bit >> 3]! ^ (1 << (bit & 7));
  return bytes.toString('base64url');
}

/** A tampered copy of `cursor` (`donor` is another issued cursor, `foreignId` an id to forge in). */
function mutate(cursor: string, m: Mutation, n: number, donor: string, foreignId: string, tail: string): string {
  const dot = cursor.indexOf('.');
  const payload = cursor.slice(0, dot);
  const mac = cursor.slice(dot + 1);
  switch (m) {
    case 'flipPayloadBit':
      return `${flipBit(payload, n)}.${mac}`;
    case 'flipMacBit':
      return `${payload}.${flipBit(mac, n)}`;
    case 'substituteChar': {
      const i = n % cursor.length;
      const c = cursor[i]!;
      const replacement = c === '.' ? 'A' : B64URL[(B64URL.indexOf(c) + 1 + (n % 63)) % 64]!;
      return cursor.slice(0, i) + replacement + cursor.slice(i + 1);
    }
    case 'truncate':
      return cursor.slice(0, n % cursor.length);
    case 'extend':
      return cursor + (tail.length > 0 ? tail : 'A');
    case 'caseSwap':
      return swapOneCase(cursor, n);
    case 'padPayload':
      return `${payload}${'='.repeat(1 + (n % 2))}.${mac}`;
    case 'padMac':
      return `${payload}.${mac}${'='.repeat(1 + (n % 2))}`;
    case 'standardBase64': {
      const std = cursor.replace(/-/g, '+').replace(/_/g, '/');
      return std === cursor ? `${Buffer.from(payload, 'base64url').toString('base64')}.${mac}` : std;
    }
    case 'dropDot':
      return payload + mac;
    case 'doubleDot':
      return `${payload}..${mac}`;
    case 'swapParts':
      return `${mac}.${payload}`;
    case 'spliceMac':
      return `${payload}.${donor.slice(donor.indexOf('.') + 1)}`;
    case 'respaceJson': {
      // The same value written differently: the MAC covers the exact text.
      try {
        const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
        return `${Buffer.from(JSON.stringify(value, null, 1), 'utf8').toString('base64url')}.${mac}`;
      } catch {
        return `${payload}A.${mac}`;
      }
    }
    case 'forgeForeignPosition': {
      // The payload rewritten to point at another tenant's row (or job), the MAC kept.
      try {
        const value = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
        for (const k of ['after', 'a', 'j']) if (k in value) value[k] = foreignId;
        if ('o' in value) value.o = 0;
        return `${Buffer.from(JSON.stringify(value), 'utf8').toString('base64url')}.${mac}`;
      } catch {
        return `${payload}A.${mac}`;
      }
    }
    case 'whitespace':
      return [` ${cursor}`, `${cursor} `, `${cursor}\n`, `\t${cursor}`][n % 4]!;
  }
}

/** How a decoded (name, value) pair is written into the URL. */
type Mode = 'encoded' | 'double' | 'raw' | 'garbage' | 'bare';
interface Part {
  name: string;
  value: string;
  mode: Mode;
  junk: string;
}

/** The query string of `parts` and, when every part is well encoded, the pairs the server decodes. */
function writeQuery(parts: Part[]): { query: string; pairs: [string, string][] | null } {
  const pairs: [string, string][] = [];
  let determined = true;
  const written = parts.map((p) => {
    const name = encodeURIComponent(p.name);
    switch (p.mode) {
      case 'encoded':
        pairs.push([p.name, p.value]);
        return `${name}=${encodeURIComponent(p.value)}`;
      case 'double':
        pairs.push([p.name, encodeURIComponent(p.value)]);
        return `${name}=${encodeURIComponent(encodeURIComponent(p.value))}`;
      case 'raw':
        determined = false;
        return `${p.name}=${p.value}`;
      case 'garbage': {
        determined = false;
        const v = encodeURIComponent(p.value);
        const at = p.junk.length % (v.length + 1);
        return `${name}=${v.slice(0, at)}${p.junk}${v.slice(at)}`;
      }
      case 'bare':
        determined = false;
        return name;
    }
  });
  return { query: written.join('&'), pairs: determined ? pairs : null };
}

const modeArb: fc.Arbitrary<Mode> = fc.oneof(
  { weight: 12, arbitrary: fc.constant<Mode>('encoded') },
  { weight: 1, arbitrary: fc.constantFrom<Mode>('double', 'raw', 'garbage', 'bare') },
);
const junkArb: fc.Arbitrary<string> = fc.constantFrom<string>('%', '%zz', '%e2%82', '%c0%af', '%ed%a0%80', '%00', '%2', '%u0041', '%ff%fe', '&', '=', '#', '+', '%26limit%3D1');

// ---------------------------------------------------------------------------------------------

describeEachDatabase('cursor fuzz', (get_) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get_().app));
  test('fixture: every paging endpoint pages through its items with limit=2 and issues cursors (Rule 6 for output)', async () => {
    const ctx = get_();
    const f = await fixture(ctx);
    assert.ok(f.listCursors.length >= 30, `${f.listCursors.length} list cursors`);
    assert.ok(f.outputCursors.length >= 8, `${f.outputCursors.length} output cursors`);
    assert.equal(new Set(allIssued(f).map((i) => i.cursor)).size, allIssued(f).length, 'every cursor is distinct');
  });

  test(`decisions.md §1/§3 (${runs(1)} runs): hostile query strings on every paging endpoint never give a 5xx; a refusal is 400 INVALID_REQUEST or INVALID_CURSOR with the registered envelope; a well-formed query gets exactly its page or error`, async (t) => {
    const ctx = get_();
    const f = await freshFixture(ctx);
    const issued = allIssued(f);
    const mutated = fc
      .tuple(fc.constantFrom(...issued.map((i) => i.cursor)), fc.constantFrom(...MUTATIONS), fc.nat(), fc.constantFrom(...issued.map((i) => i.cursor)), fc.constantFrom(...f.a.ids, ...f.b.ids), fc.stringMatching(/^[A-Za-z0-9_=.-]{0,8}$/))
      .map(([c, m, n, donor, id, tail]) => mutate(c, m, n, donor, id, tail));
    /** Cursor values for `target`: its own valid cursors, anyone's, tampered ones, hostile strings. */
    const cursorValue = (target: Target): fc.Arbitrary<string> => {
      const own = issued.filter((i) => targetKey(i.target) === targetKey(target)).map((i) => i.cursor);
      return fc.oneof(
        { weight: own.length > 0 ? 4 : 0, arbitrary: own.length > 0 ? fc.constantFrom(...own) : fc.constant('') },
        { weight: 2, arbitrary: fc.constantFrom(...issued.map((i) => i.cursor)) },
        { weight: 2, arbitrary: mutated },
        { weight: 2, arbitrary: hostileString },
      );
    };
    const paramName = fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('limit', 'cursor', 'types') },
      { weight: 3, arbitrary: fc.constantFrom('Limit', 'CURSOR', 'limit[]', 'cursor[0]', 'cursor ', ' limit', '__proto__', 'constructor', 'hasOwnProperty', 'toString', '', 'offset', 'page', 'after', 'Key', 'access_token') },
      { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
    );
    const part = (name: fc.Arbitrary<string>, value: (name: string) => fc.Arbitrary<string>) =>
      name.chain((n) => fc.record({ name: fc.constant(n), value: value(n), mode: modeArb, junk: junkArb }));
    /** Mostly one of each parameter the target takes (so pages happen), sometimes extra, unknown or repeated ones. */
    const queryFor = (target: Target): fc.Arbitrary<Part[]> => {
      const valueFor = (name: string) => (name.startsWith('limit') ? limitValue : name.startsWith('cursor') ? cursorValue(target) : name === 'types' ? typesValue : hostileString);
      const takes = allowedParams(target.kind);
      /** The parameter in `percent` of the queries of targets that take it, in 5 % of the others. */
      const optional = (name: string, percent: number): fc.Arbitrary<Part | undefined> => {
        const p = takes.includes(name) ? percent : 5;
        return fc.oneof({ weight: 100 - p, arbitrary: fc.constant(undefined) }, { weight: p, arbitrary: part(fc.constant(name), valueFor) });
      };
      return fc
        .tuple(
          optional('limit', 60),
          optional('cursor', 70),
          optional('types', 50),
          fc.oneof({ weight: 3, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: fc.array(part(paramName, valueFor), { minLength: 1, maxLength: 2 }) }),
          fc.boolean(),
        )
        .map(([l, c, ty, extra, reverse]) => {
          const parts = [l, c, ty, ...extra].filter((p): p is Part => p !== undefined);
          return reverse ? parts.reverse() : parts;
        });
    };
    const allTargets = [...targetsOf(f.a), ...targetsOf(f.b)];
    const caseArb = fc.constantFrom(...allTargets).chain((target) => fc.tuple(fc.constant(target), queryFor(target)));
    const stats: Record<string, number> = {};

    await fc.assert(
      fc.asyncProperty(caseArb, async ([target, parts]) => {
        const caller = target.owner;
        const { query, pairs } = writeQuery(parts);
        const res = await get(ctx, caller, `${targetPath(target)}?${query}`);
        let code: string;
        if (pairs) {
          code = assertOutcome(f, target, res, expectedOutcomes(f, target, pairs), `${targetPath(target)}?${query}`.slice(0, 400));
        } else {
          code = assertContract(f, caller, res);
          assert.ok(['OK', 'INVALID_REQUEST', 'INVALID_CURSOR', 'UNAUTHENTICATED'].includes(code), `${targetPath(target)}?${query}: ${res.statusCode} ${res.body.slice(0, 300)}`);
          if (code === 'OK') assert.ok(target.kind === 'output' || pageItems(target, res.json().data).length <= 100);
        }
        stats[code] = (stats[code] ?? 0) + 1;
      }),
      { numRuns: runs(1) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    // The generator reaches every outcome (a property that only ever saw 400s would prove little).
    if (runs(1) >= 100) assert.ok((stats.OK ?? 0) > 10 && (stats.INVALID_REQUEST ?? 0) > 10 && (stats.INVALID_CURSOR ?? 0) > 10, JSON.stringify(stats));
  });

  test(`decisions.md §1 (${runs(1)} runs): a tampered cursor (bit flips, truncation, extension, case swaps, padding, spliced MACs, forged positions) is 400 INVALID_CURSOR on its own list and on the output endpoint`, async () => {
    const ctx = get_();
    const f = await freshFixture(ctx);
    const issued = allIssued(f);
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...issued),
        fc.constantFrom(...MUTATIONS),
        fc.nat(),
        fc.constantFrom(...issued.map((i) => i.cursor)),
        fc.constantFrom(...f.a.ids, ...f.b.ids),
        fc.stringMatching(/^[A-Za-z0-9_=.-]{1,8}$/),
        fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }),
        async (source, m, n, donor, foreignId, tail, limit) => {
          const tampered = mutate(source.cursor, m, n, donor, foreignId, tail);
          fc.pre(tampered !== source.cursor);
          const target = source.target;
          const pairs: [string, string][] = [['cursor', tampered]];
          if (limit !== undefined && target.kind !== 'output') pairs.push(['limit', String(limit)]);
          const res = await get(ctx, target.owner, `${targetPath(target)}?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`);
          const expected = expectedOutcomes(f, target, pairs);
          const what = `${m} of a ${targetKey(target)} cursor: ${JSON.stringify(tampered)}`;
          const code = assertOutcome(f, target, res, expected, what);
          const length = [...tampered].length;
          if (length >= 1 && length <= maxCursorLength(target.kind)) assert.equal(code, 'INVALID_CURSOR', what);
        },
      ),
      { numRuns: runs(1) },
    );
  });

  test(`decisions.md §1 (${runs(1)} runs): a valid cursor works only on the list, workspace, webhook or job that issued it; another endpoint's, another tenant's (same endpoint) or another job's output cursor is 400 INVALID_CURSOR`, async (t) => {
    const ctx = get_();
    const f = await freshFixture(ctx);
    const issued = allIssued(f);
    const relation = fc.constantFrom('same endpoint, other tenant', 'other endpoint, same tenant', 'other webhook or job, same tenant', 'anywhere', 'its own list');
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...issued), relation, fc.nat(), fc.option(fc.integer({ min: 1, max: 100 }), { nil: undefined }), async (source, rel, n, limit) => {
        const owner = source.target.owner;
        const foreign = other(f, owner);
        let candidates: Target[];
        if (rel === 'same endpoint, other tenant') candidates = targetsOf(foreign).filter((t) => t.kind === source.target.kind);
        else if (rel === 'other endpoint, same tenant') candidates = targetsOf(owner).filter((t) => targetKey(t) !== targetKey(source.target));
        else if (rel === 'its own list') candidates = [source.target];
        else if (rel === 'other webhook or job, same tenant') {
          candidates = targetsOf(owner).filter((t) => t.kind === source.target.kind && targetKey(t) !== targetKey(source.target));
          if (candidates.length === 0) candidates = targetsOf(owner).filter((t) => t.sub !== null && t.kind !== source.target.kind);
        }
        else candidates = [...targetsOf(f.a), ...targetsOf(f.b)];
        const target = candidates[n % candidates.length]!;
        const pairs: [string, string][] = [['cursor', source.cursor]];
        if (limit !== undefined && target.kind !== 'output') pairs.push(['limit', String(limit)]);
        const res = await get(ctx, target.owner, `${targetPath(target)}?${pairs.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&')}`);
        const what = `a ${targetKey(source.target)} cursor sent to ${targetKey(target)}`;
        const code = assertOutcome(f, target, res, expectedOutcomes(f, target, pairs), what);
        if (targetKey(target) === targetKey(source.target)) assert.equal(code, 'OK', what);
        else if ([...source.cursor].length <= maxCursorLength(target.kind)) assert.equal(code, 'INVALID_CURSOR', what);
        else assert.equal(code, 'INVALID_REQUEST', what);
        const key = `${rel}: ${code}`;
        stats[key] = (stats[key] ?? 0) + 1;
      }),
      { numRuns: runs(1) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`decisions.md §3 NOT_FOUND (${runs(0.6)} runs): on /v1/jobs/{id}/output and /v1/webhooks/{id}/deliveries a non-UUID id is 400 INVALID_REQUEST, a UUID of nothing or of another tenant's resource is 404 NOT_FOUND (with its own valid cursor too), never 403 and never its data`, async (t) => {
    const ctx = get_();
    const f = await freshFixture(ctx);
    const issued = allIssued(f);
    /** Near misses of a real id: what the path schema accepts (case, urn:uuid:) and what it does not. */
    const uuidLike = (id: string) => [
      id.toUpperCase(),
      `urn:uuid:${id}`,
      `{${id}}`,
      id.replace(/-/g, ''),
      id.slice(0, -1),
      `${id}0`,
      ` ${id}`,
      `${id} `,
      `${id.slice(0, -1)}g`,
      `${id}/`,
      `${id}%00`,
      `${id}\u0000`,
      `../${id}`,
    ];
    const stats: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(f.a, f.b),
        fc.constantFrom<Kind>('output', 'deliveries'),
        fc.nat(),
        fc.oneof(
          { weight: 2, arbitrary: fc.constant('foreign, same kind') },
          { weight: 1, arbitrary: fc.constant('foreign') },
          { weight: 1, arbitrary: fc.constant('own, wrong kind') },
          { weight: 1, arbitrary: fc.constant('nothing') },
          { weight: 2, arbitrary: fc.constant('not a uuid') },
          { weight: 1, arbitrary: fc.constant('uuid-like') },
        ),
        fc.uuid(),
        hostileString,
        fc.nat(),
        fc.constantFrom('none', 'its own cursor', 'another cursor', 'tampered'),
        async (caller, kind, pick, idKind, nothing, garbage, variant, cursorKind) => {
          const foreign = other(f, caller);
          // The caller's own resources of the path's kind answer 200: every own job has an output.
          const ownRightKind = new Set(kind === 'output' ? caller.refs.get(targetKey({ kind: 'jobs', owner: caller, sub: null }))! : caller.webhooks);
          let id: string;
          if (idKind === 'foreign, same kind') {
            const ids = kind === 'output' ? foreign.refs.get(targetKey({ kind: 'jobs', owner: foreign, sub: null }))! : foreign.webhooks;
            id = ids[pick % ids.length]!;
          } else if (idKind === 'foreign') id = foreign.ids[pick % foreign.ids.length]!;
          else if (idKind === 'own, wrong kind') {
            const ids = caller.ids.filter((x) => !ownRightKind.has(x));
            id = ids[pick % ids.length]!;
          } else if (idKind === 'nothing') id = nothing;
          else if (idKind === 'not a uuid') id = garbage;
          else {
            const ids = [...caller.ids, ...foreign.ids];
            const variants = uuidLike(ids[pick % ids.length]!);
            id = variants[variant % variants.length]!;
          }
          fc.pre(!ownRightKind.has(id));
          // A cursor issued for this very path (when the id is another tenant's webhook or job), another one, or a tampered one.
          const own = issued.filter((i) => i.target.kind === kind && i.target.sub === id);
          let cursor: string | undefined;
          if (cursorKind === 'its own cursor' && own.length > 0) cursor = own[pick % own.length]!.cursor;
          else if (cursorKind === 'another cursor' || (cursorKind === 'its own cursor' && own.length === 0)) cursor = issued[pick % issued.length]!.cursor;
          else if (cursorKind === 'tampered') cursor = mutate(issued[pick % issued.length]!.cursor, MUTATIONS[variant % MUTATIONS.length]!, variant, issued[0]!.cursor, foreign.ids[0]!, 'x');
          const query = cursor === undefined ? '' : `?cursor=${encodeURIComponent(cursor)}`;
          const path = kind === 'output' ? `/v1/jobs/${encodeURIComponent(id)}/output` : `/v1/webhooks/${encodeURIComponent(id)}/deliveries`;
          const res = await get(ctx, caller, path + query);
          const what = `${caller.name} GET ${path}${query} (${idKind}, ${cursorKind})`.slice(0, 400);
          const code = assertContract(f, caller, res, id);
          assert.notEqual(code, 'OK', `${what}: another tenant's or no resource is never 200`);
          const cursorTooLong = cursor !== undefined && ([...cursor].length > maxCursorLength(kind) || cursor.length === 0);
          const validForPath = cursor !== undefined && own.some((i) => i.cursor === cursor);
          if (!UUID_FORMAT.test(id)) {
            // Not a UUID: the path schema refuses it (or the router finds no route for it).
            assert.ok(['INVALID_REQUEST', 'NOT_FOUND'].includes(code), `${what}: ${res.statusCode} ${res.body}`);
          } else if (cursorTooLong) {
            assert.equal(code, 'INVALID_REQUEST', what);
          } else if (cursor === undefined || validForPath || kind === 'deliveries') {
            assert.equal(code, 'NOT_FOUND', `${what}: ${res.statusCode} ${res.body}`);
          } else {
            // A cursor not issued for this path: refused as a cursor or as the missing job, and
            // exactly as for a UUID of nothing, so the answer tells nothing about the id.
            assert.ok(['INVALID_CURSOR', 'NOT_FOUND'].includes(code), `${what}: ${res.statusCode} ${res.body}`);
            const control = await get(ctx, caller, `/v1/jobs/${randomUUID()}/output${query}`);
            assert.equal(`${res.statusCode} ${res.json().code}`, `${control.statusCode} ${control.json().code}`, `${what}: same answer as for a UUID of nothing`);
          }
          const key = `${idKind}/${cursorKind}: ${code}`;
          stats[key] = (stats[key] ?? 0) + 1;
        },
      ),
      { numRuns: runs(0.6) },
    );
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
  });

  test(`spec Size and paging bounds, decisions.md GET /v1/events (${runs(0.3)} runs): paging with valid cursors and any page sizes visits every item exactly once, in list order; reading a cursor again gives the same page`, async () => {
    const ctx = get_();
    const f = await freshFixture(ctx);
    const pageSize = fc.oneof({ weight: 4, arbitrary: fc.integer({ min: 1, max: 5 }) }, { weight: 1, arbitrary: fc.integer({ min: 1, max: 100 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(f.a, f.b),
        fc.nat(),
        fc.array(pageSize, { minLength: 1, maxLength: 6 }),
        fc.option(fc.subarray<string>([...EVENT_TYPES], { minLength: 1 }), { nil: undefined }),
        fc.nat(),
        async (caller, n, sizes, types, repeatAt) => {
          const targets = targetsOf(caller).filter((t) => t.kind !== 'output');
          const target = targets[n % targets.length]!;
          const filter = target.kind === 'events' && types ? types : null;
          let expected = caller.refs.get(targetKey(target))!;
          if (filter) expected = expected.filter((id) => filter.includes(caller.eventTypes.get(id)!));
          const visited: string[] = [];
          let cursor: string | undefined;
          for (let page = 0; ; page++) {
            assert.ok(page <= expected.length + 1, 'paging ends');
            const limit = sizes[page % sizes.length]!;
            const url = `${targetPath(target)}?limit=${limit}${filter ? `&types=${filter.join(',')}` : ''}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
            const res = await get(ctx, caller, url);
            assert.equal(assertContract(f, caller, res), 'OK', `${url}: ${res.body.slice(0, 300)}`);
            const data = res.json().data;
            const ids = pageItems(target, data).map((i) => i.id);
            if (page === repeatAt % (expected.length + 1)) {
              const again = await get(ctx, caller, url);
              assert.deepEqual(pageItems(target, again.json().data).map((i) => i.id), ids, 'the same cursor gives the same page');
            }
            visited.push(...ids);
            const more = target.kind === 'events' ? data.hasMore : data.nextCursor !== null;
            if (more) assert.equal(ids.length, limit, 'a page before the end is full');
            if (!more) break;
            cursor = data.nextCursor;
          }
          assert.equal(new Set(visited).size, visited.length, 'no item twice');
          assert.deepEqual(visited, expected, `${targetKey(target)}${filter ? ` types ${filter}` : ''} with page sizes ${sizes}: every item once, in order`);
        },
      ),
      { numRuns: runs(0.3) },
    );
  });

  test('spec Errors 5: an output cursor older than OUTPUT_CURSOR_TTL_S is 410 CURSOR_EXPIRED (still valid at exactly the TTL); tampered is 400 first; another tenant gets 404 for it', async () => {
    const ctx = get_();
    const f = await fixture(ctx);
    const ttlMs = ctx.config.outputCursorTtlS * 1000;
    for (const side of [f.a, f.b]) {
      const foreign = other(f, side);
      const job = side.outputJobs[0];
      const first = await outputPage(ctx, side, job);
      assert.equal(first.statusCode, 200, first.body);
      const cursor = first.json().data.nextCursor as string;
      const offset = Buffer.byteLength(first.json().data.fragment, 'utf8');
      assert.equal(first.json().data.snapshotExpiresAt, new Date(ctx.clock.now() + ttlMs).toISOString());

      ctx.clock.advance(ttlMs);
      const atTtl = await outputPage(ctx, side, job, cursor);
      assert.equal(atTtl.statusCode, 200, `valid for exactly OUTPUT_CURSOR_TTL_S: ${atTtl.body}`);
      assert.equal(atTtl.json().data.offsetBytes, offset);

      ctx.clock.advance(1);
      const expired = await outputPage(ctx, side, job, cursor);
      assert.equal(assertContract(f, side, expired), 'CURSOR_EXPIRED', expired.body);
      assert.equal(expired.statusCode, 410);
      const tampered = await outputPage(ctx, side, job, mutate(cursor, 'flipPayloadBit', 77, cursor, job, 'x'));
      assert.equal(assertContract(f, side, tampered), 'INVALID_CURSOR', tampered.body);
      // Another tenant holding this (expired) cursor learns nothing: the job is not in its workspace.
      // (Found by this file: readOutput used to check the cursor's age before the workspace and
      // answered 410 here; the job lookup now comes first, src/modules/jobs/output.ts.)
      const stolen = await outputPage(ctx, foreign, job, cursor);
      assert.equal(assertContract(f, foreign, stolen, job), 'NOT_FOUND', `another tenant's expired cursor at its job: ${stolen.statusCode} ${stolen.body}`);
      const misplaced = await outputPage(ctx, foreign, foreign.outputJobs[0], cursor);
      assert.equal(assertContract(f, foreign, misplaced), 'INVALID_CURSOR', misplaced.body);
      // Restart without a cursor.
      const restart = await outputPage(ctx, side, job);
      assert.equal(restart.statusCode, 200);
      assert.equal(restart.json().data.offsetBytes, 0);
    }
  });

  test('spec Errors 4: an output cursor issued before the result changed is 409 OUTPUT_CHANGED; a restart reads the new document; another tenant still gets 404', async () => {
    const ctx = get_();
    const f = await fixture(ctx);
    for (const side of [f.a, f.b]) {
      const foreign = other(f, side);
      const job = side.changingJob;
      const first = await outputPage(ctx, side, job);
      assert.equal(first.statusCode, 200, first.body);
      const cursor = first.json().data.nextCursor as string;
      assert.equal((await outputPage(ctx, side, job, cursor)).statusCode, 200);

      const replaced = JSON.stringify({ text: `${side.name}-changed `.repeat(2_000) });
      await ctx.deps.db.updateTable('jobs').set({ output_json: replaced, output_sha256: createHash('sha256').update(replaced).digest('hex') }).where('id', '=', job).execute();

      const changed = await outputPage(ctx, side, job, cursor);
      assert.equal(assertContract(f, side, changed), 'OUTPUT_CHANGED', changed.body);
      assert.equal(changed.statusCode, 409);
      const tampered = await outputPage(ctx, side, job, mutate(cursor, 'caseSwap', 3, cursor, job, 'x'));
      assert.equal(assertContract(f, side, tampered), 'INVALID_CURSOR', tampered.body);
      const stolen = await outputPage(ctx, foreign, job, cursor);
      assert.equal(assertContract(f, foreign, stolen, job), 'NOT_FOUND', stolen.body);

      const parts: string[] = [];
      let next: string | undefined;
      do {
        const res = await outputPage(ctx, side, job, next);
        assert.equal(res.statusCode, 200, res.body);
        parts.push(res.json().data.fragment);
        next = res.json().data.nextCursor ?? undefined;
      } while (next);
      assert.deepEqual(JSON.parse(parts.join('')), JSON.parse(replaced));
    }
  });
}, testKeySuite());
