/**
 * Usage points and GET /v1/usage (spec Limits, Budgets and Authentication 6; decisions.md
 * rate-limit headers and 429 bodies): weights per endpoint, one counter per workspace shared by
 * its keys, the UTC minute and month windows, overrides, RateLimit-* headers and the budgets
 * report. Tenants that run operations use test keys (simulated work, the test balance, points
 * counted in the test twin); the others are live keys, which run nothing here. The weight of every
 * GET endpoint is measured with a test key too: the setups (support/endpoints.ts, shared with the
 * route tests) fund and seed in the key's mode.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import type { Deps } from '../../src/deps.js';
import { newId } from '../../src/lib/ids.js';
import { createWorkspace } from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import * as billing from '../../src/modules/billing/store.js';
import { resolveLimits } from '../../src/modules/usage/plans.js';
import { admin, call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { endpointName, prepareEndpoint, PUBLIC_ENDPOINTS } from '../support/endpoints.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { scopeOf, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { DECIDED_WEIGHTS, SPEC_OPERATION_WEIGHTS, SPEC_WEIGHTS } from '../support/spec-weights.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { assertStatus } from '../support/assertions.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

function getAs(ctx: TestContext, secret: string, workspaceId: string, url: string, query?: Record<string, string>, headers?: Record<string, string>) {
  return call(ctx, 'GET', url, { secret, workspaceId, ...(query ? { query } : {}), ...(headers ? { headers } : {}) });
}

async function usage(ctx: TestContext, t: { secret: string; workspace: { id: string } }) {
  const res = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
  assertStatus(res, 200, 'PUBLIC_USAGE_GET');
  return res.json().data;
}

function rateHeaders(res: LightMyRequestResponse) {
  return {
    limit: Number(res.headers['ratelimit-limit']),
    remaining: Number(res.headers['ratelimit-remaining']),
    reset: Number(res.headers['ratelimit-reset']),
  };
}

async function settings(ctx: TestContext, workspaceId: string, body: unknown) {
  const res = await admin(ctx, `/admin/v1/workspaces/${workspaceId}/settings`, body);
  assertStatus(res, 200, 'ADMIN_WORKSPACES_SETTINGS');
  return res.json().data;
}

/** Points used in the current windows of the tenant's mode, as the meter sees them (peeking charges nothing). */
async function used(ctx: TestContext, t: Tenant) {
  const { minute, month } = await ctx.deps.usage.peek(scopeOf(t), resolveLimits(t.workspace));
  return { minute: minute.used, month: month.used };
}

/** Spec endpoints whose weight is operation-specific: their cases name the operation they run. */
const OPERATION_SPECIFIC = new Set(['POST /v1/runs', 'POST /v1/jobs/:jobId/retry']);


/** The spec's weight for the endpoint case: its route's, or its operation's for runs and retries. */
function specWeight(ep: (typeof PUBLIC_ENDPOINTS)[number]): number | undefined {
  const route = `${ep.method} ${ep.url}`;
  if (OPERATION_SPECIFIC.has(route)) return ep.operationId === undefined ? undefined : SPEC_OPERATION_WEIGHTS[ep.operationId];
  return SPEC_WEIGHTS[route] ?? DECIDED_WEIGHTS[route];
}

describeEachDatabase('usage points: every endpoint\'s weight', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('usage points: each endpoint charges its spec weight, seen in minuteUsed and monthlyUsed', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:00:05.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'pro', mode: 'test' });
    let expected = 0;
    for (const ep of PUBLIC_ENDPOINTS) assert.equal(ep.points, specWeight(ep), `${endpointName(ep)}: spec weight`);
    for (const ep of PUBLIC_ENDPOINTS.filter((e) => e.method === 'GET')) {
      // A setup may seed resources, through the API too (a job comes from POST /v1/runs): what it
      // spends is counted apart from the endpoint's own charge.
      const beforeSetup = await used(ctx, t);
      const { url } = await prepareEndpoint(ctx, ep, t);
      const before = await used(ctx, t);
      assert.equal(before.month - beforeSetup.month, before.minute - beforeSetup.minute);
      expected += before.minute - beforeSetup.minute;
      assertStatus(await getAs(ctx, t.secret, t.workspace.id, url, undefined, ep.headers?.()), 200);
      const after = await used(ctx, t);
      assert.equal(after.minute - before.minute, ep.points, `${ep.url} charges ${ep.points}`);
      assert.equal(after.month - before.month, ep.points);
      expected += ep.points;
    }
    const data = await usage(ctx, t);
    assert.equal(data.points.minuteUsed, expected + 1, 'the usage read itself costs 1');
    assert.equal(data.points.monthlyUsed, expected + 1);
  });
}, testKeySuite());

describeEachDatabase('usage points', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('usage points are per workspace across keys: two keys of one workspace share the counter', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:10:05.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id]);
    const r1 = await getAs(ctx, t.secret, t.workspace.id, '/v1/balance');
    const r2 = await getAs(ctx, second.secret, t.workspace.id, '/v1/balance');
    assert.equal(rateHeaders(r1).remaining, 3_600 - 2);
    assert.equal(rateHeaders(r2).remaining, 3_600 - 4, 'the second key sees the first key\'s points');
    const data = await usage(ctx, { secret: second.secret, workspace: t.workspace });
    assert.equal(data.points.minuteUsed, 5);
    // Another workspace of the same user has its own counter.
    const other = await createWorkspace(ctx.deps, { name: 'Other', plan: 'pro', ownerUserId: t.user.id });
    const both = await seedKey(ctx.deps, t.user.id, [t.workspace.id, other.id]);
    assert.equal(rateHeaders(await getAs(ctx, both.secret, other.id, '/v1/usage')).remaining, 3_600 - 1);
  });

  test('usage points: more keys do not multiply quota (three keys share one free-plan minute of 240)', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:20:01.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    const secrets = [t.secret, (await seedKey(ctx.deps, t.user.id, [t.workspace.id])).secret, (await seedKey(ctx.deps, t.user.id, [t.workspace.id])).secret];
    let admitted = 0;
    let i = 0;
    for (; i < 200; i++) {
      const res = await getAs(ctx, secrets[i % 3]!, t.workspace.id, '/v1/balance');
      if (res.statusCode === 429) break;
      assertStatus(res, 200);
      admitted++;
    }
    assert.equal(admitted, 120, '240 points / 2 per request, whichever key asks');
    for (const s of secrets) assertStatus(await getAs(ctx, s, t.workspace.id, '/v1/balance'), 429, 'RATE_LIMITED');
  });

  test('usage points minute window: free plan 240/min ends in 429 RATE_LIMITED, Retry-After to the next UTC minute, details POINTS_MINUTE and resetsAt', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:30:15.500Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    for (let i = 0; i < 240; i++) {
      const res = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
      assertStatus(res, 200);
      assert.equal(rateHeaders(res).remaining, 240 - (i + 1));
    }
    const refused = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(refused, 429, 'RATE_LIMITED');
    const body = refused.json();
    assert.equal(body.success, false);
    assert.equal(body.details.limit, 'POINTS_MINUTE');
    assert.equal(body.details.resetsAt, '2026-11-18T12:31:00.000Z');
    assert.equal(refused.headers['retry-after'], '45', 'ceil(44.5 s) to 12:31:00Z');
    assert.equal(body.requestId, refused.headers['x-request-id']);
  });

  test('usage points: a refused request does not consume points, and the next UTC minute admits again', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:40:50.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: 10 } });
    for (let i = 0; i < 5; i++) assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/balance'), 200);
    for (let i = 0; i < 7; i++) assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/balance'), 429, 'RATE_LIMITED');
    // A cheaper request that would still fit is admitted: the refusals took nothing.
    ctx.clock.set(at('2026-11-18T12:40:59.999Z'));
    assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 429, 'RATE_LIMITED');
    assert.deepEqual(await used(ctx, t), { minute: 10, month: 10 }, '7 + 1 refused requests charged nothing');

    ctx.clock.set(at('2026-11-18T12:41:00.000Z'));
    const data = await usage(ctx, t);
    assert.equal(data.points.minuteUsed, 1);
    assert.equal(data.points.minuteResetsAt, '2026-11-18T12:42:00.000Z');
    assert.equal(data.points.monthlyUsed, 11, 'the month counted only admitted requests');
    for (let i = 0; i < 4; i++) assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/balance'), 200);
    assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 200);
    assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 429);
  });

  test('usage points month window: override pointsPerMonth 10 gives 429 POINTS_MONTH with resetsAt the first of next month 00:00Z', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T13:00:00.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    const s = await settings(ctx, t.workspace.id, { limits: { pointsPerMonth: 10 } });
    assert.equal(s.limits.pointsPerMonth, 10);
    let data = await usage(ctx, t);
    assert.equal(data.points.monthlyLimit, 10, 'the override is reported');
    assert.equal(data.points.minuteLimit, 240);
    for (let i = 0; i < 9; i++) {
      ctx.clock.advance(61_000); // new minutes: only the month can refuse
      assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 200);
    }
    ctx.clock.advance(61_000);
    const refused = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(refused, 429, 'RATE_LIMITED');
    assert.equal(refused.json().details.limit, 'POINTS_MONTH');
    assert.equal(refused.json().details.resetsAt, '2026-12-01T00:00:00.000Z');
    assert.equal(Number(refused.headers['retry-after']), Math.ceil((at('2026-12-01T00:00:00.000Z') - ctx.clock.now()) / 1000));
    assert.equal(rateHeaders(refused).limit, 240, 'RateLimit-* still describe the minute window');

    ctx.clock.set(at('2026-12-01T00:00:00.000Z'));
    data = await usage(ctx, t);
    assert.equal(data.points.monthlyUsed, 1, 'a new month admits again');
    assert.equal(data.points.monthlyResetsAt, '2027-01-01T00:00:00.000Z');

    const restored = await settings(ctx, t.workspace.id, { limits: { pointsPerMonth: null } });
    assert.equal(restored.limits.pointsPerMonth, 10_000);
    data = await usage(ctx, t);
    assert.equal(data.points.monthlyLimit, 10_000, 'null restores the plan default');
  });

  test('usage points: overrides of pointsPerMinute and streams are what GET /v1/usage and RateLimit-Limit report; null restores the plan', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T01:00:00.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: 500, streams: 2 } });
    const res = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(res, 200);
    assert.equal(rateHeaders(res).limit, 500);
    assert.deepEqual(res.json().data.points.minuteLimit, 500);
    assert.deepEqual(res.json().data.streams, { enabled: true, maximum: 2 });
    await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: null, streams: null } });
    const data = await usage(ctx, t);
    assert.equal(data.points.minuteLimit, 240);
    assert.deepEqual(data.streams, { enabled: false, maximum: 0 });
    await settings(ctx, t.workspace.id, { plan: 'starter' });
    assert.equal((await usage(ctx, t)).points.minuteLimit, 1_200, 'a plan change applies at once');
  });

  test('RateLimit-Limit/Remaining/Reset on every authenticated response: 200, 400, INVALID_CURSOR and both 429s', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T02:00:20.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: 10, pointsPerMonth: 12 } });
    const check = (res: LightMyRequestResponse, remaining: number) =>
      assert.deepEqual(rateHeaders(res), { limit: 10, remaining, reset: 40 }, `${res.statusCode} ${res.body}`);

    const ok = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(ok, 200);
    check(ok, 9);
    const invalid = await getAs(ctx, t.secret, t.workspace.id, '/v1/balance', { limit: '0' });
    assertStatus(invalid, 400, 'INVALID_REQUEST');
    check(invalid, 7);
    const badCursor = await getAs(ctx, t.secret, t.workspace.id, '/v1/transactions', { cursor: 'x.y' });
    assertStatus(badCursor, 400, 'INVALID_CURSOR');
    check(badCursor, 5);
    for (let i = 0; i < 5; i++) assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 200);
    const minute429 = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(minute429, 429, 'RATE_LIMITED');
    assert.equal(minute429.json().details.limit, 'POINTS_MINUTE');
    check(minute429, 0);
    assert.equal(minute429.headers['retry-after'], '40');

    ctx.clock.set(at('2026-12-01T02:01:00.000Z'));
    assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/balance'), 200); // month 12 of 12
    const month429 = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(month429, 429, 'RATE_LIMITED');
    assert.equal(month429.json().details.limit, 'POINTS_MONTH');
    assert.deepEqual(rateHeaders(month429), { limit: 10, remaining: 8, reset: 60 });
    assert.equal(Number(month429.headers['retry-after']), (at('2027-01-01T00:00:00.000Z') - ctx.clock.now()) / 1000);
  });

  test('RateLimit headers on 403 refusals of an authenticated key for a workspace it may use (FORBIDDEN_SCOPE); none where no such workspace is established', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T03:00:15.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free', key: { scopes: ['usage:read'] } });
    assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 200);
    const scope = await getAs(ctx, t.secret, t.workspace.id, '/v1/balance');
    assertStatus(scope, 403, 'FORBIDDEN_SCOPE');
    assert.deepEqual(rateHeaders(scope), { limit: 240, remaining: 239, reset: 45 }, 'the refusal charged nothing');
    // A workspace the key does not include: there is no window the caller may see.
    const other = await createWorkspace(ctx.deps, { name: 'Other', plan: 'pro', ownerUserId: t.user.id });
    const forbidden = await getAs(ctx, t.secret, other.id, '/v1/usage');
    assertStatus(forbidden, 403, 'FORBIDDEN_WORKSPACE');
    assert.equal(forbidden.headers['ratelimit-limit'], undefined);
    assert.equal((await getAs(ctx, 'wask_' + 'A'.repeat(43), t.workspace.id, '/v1/usage')).headers['ratelimit-limit'], undefined, '401 has none');
  });

  test('RateLimit-Remaining after a run includes the points the run service charged (routes whose points depend on the operation)', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T04:00:10.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'pro', credits: 100_000, mode: 'test' });
    const body = { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'Hello' }], maxTokens: 50 } };
    const res = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, body, headers: { 'idempotency-key': 'rl-1' } });
    assertStatus(res, 200);
    assert.deepEqual(rateHeaders(res), { limit: 3_600, remaining: 3_600 - 10, reset: 50 }, 'chat.generate costs 10 points');
    const replay = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, body, headers: { 'idempotency-key': 'rl-1' } });
    assertStatus(replay, 200);
    assert.equal(rateHeaders(replay).remaining, 3_600 - 11, 'an idempotent replay costs 1 point');
    assert.equal((await used(ctx, t)).minute, 11);
  });

  test('runs and retries refused before admission cost 1 point each (invalid input, unknown or forbidden operation, missing or conflicting Idempotency-Key, job not retryable); 402 costs the operation', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T04:00:10.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'pro', credits: 10, mode: 'test' });
    const post = (url: string, body: unknown, key: string | null = randomUUID()) =>
      call(ctx, 'POST', url, { secret: t.secret, workspaceId: t.workspace.id, body, headers: key === null ? {} : { 'idempotency-key': key } });
    const CHAT = { messages: [{ role: 'user', content: 'Hello' }], maxTokens: 50 };
    const refusals: [string, unknown, string | null | undefined, string][] = [
      ['/v1/runs', { operationId: 'chat.generate', input: { messages: 'nope' } }, undefined, 'INVALID_INPUT'],
      ['/v1/runs', { operationId: 'no.such', input: {} }, undefined, 'UNKNOWN_OPERATION'],
      ['/v1/runs', { operationId: 'chat.generate', input: CHAT }, null, 'IDEMPOTENCY_KEY_REQUIRED'],
      ['/v1/runs', { operationId: 'chat.generate', input: CHAT }, 'k'.repeat(129), 'INVALID_REQUEST'],
      ['/v1/runs', { operationId: 'background.remove', input: { mediaId: randomUUID() } }, undefined, 'INVALID_INPUT'],
      [`/v1/jobs/${randomUUID()}/retry`, undefined, undefined, 'NOT_FOUND'],
    ];
    let expected = 0;
    for (const [url, body, key, code] of refusals) {
      const res = await post(url, body, key);
      assert.equal(res.json().code, code, res.body);
      expected += 1;
      assert.equal((await used(ctx, t)).minute, expected, `${code} costs 1 point`);
      assert.equal(rateHeaders(res).remaining, 3_600 - expected, `${code}: RateLimit-Remaining includes it`);
    }
    const narrow = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { operations: ['chat.generate'], mode: 'test' });
    const forbidden = await call(ctx, 'POST', '/v1/runs', { secret: narrow.secret, workspaceId: t.workspace.id, body: { operationId: 'music.generate', input: { prompt: 'x', durationSeconds: 10 } }, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(forbidden.json().code, 'FORBIDDEN_OPERATION');
    expected += 1;
    assert.equal((await used(ctx, t)).minute, expected, 'FORBIDDEN_OPERATION costs 1 point');
    const poor = await post('/v1/runs', { operationId: 'chat.generate', input: CHAT }, 'same-key');
    assert.equal(poor.json().code, 'INSUFFICIENT_CREDITS');
    expected += 10;
    assert.equal((await used(ctx, t)).minute, expected, 'a 402 at admission costs the operation’s 10 points');
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000_000, mode: 'test' });
    const done = await post('/v1/runs', { operationId: 'chat.generate', input: CHAT }, 'same-key');
    assert.equal(done.statusCode, 200, done.body);
    expected += 10;
    const conflict = await post('/v1/runs', { operationId: 'chat.generate', input: { ...CHAT, maxTokens: 51 } }, 'same-key');
    assert.equal(conflict.json().code, 'IDEMPOTENCY_CONFLICT');
    expected += 1;
    const notRetryable = await post(`/v1/jobs/${done.json().data.jobId}/retry`, undefined);
    assert.equal(notRetryable.json().code, 'JOB_NOT_RETRYABLE');
    expected += 1;
    assert.equal((await used(ctx, t)).minute, expected, 'a conflict and a refused retry cost 1 point each');
  });

  test('runs and retries on a window with no point left are 429 before their input is checked', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-12-01T04:00:10.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'free', credits: 100_000, mode: 'test' });
    await settings(ctx, t.workspace.id, { limits: { pointsPerMinute: 3 } });
    for (let i = 0; i < 3; i++) assertStatus(await getAs(ctx, t.secret, t.workspace.id, '/v1/usage'), 200);
    const bad = { operationId: 'chat.generate', input: { messages: 'nope' } };
    for (const url of ['/v1/runs', `/v1/jobs/${randomUUID()}/retry`]) {
      const res = await call(ctx, 'POST', url, { secret: t.secret, workspaceId: t.workspace.id, body: url === '/v1/runs' ? bad : undefined, headers: { 'idempotency-key': randomUUID() } });
      assertStatus(res, 429, 'RATE_LIMITED');
      assert.equal(res.json().details.limit, 'POINTS_MINUTE');
      assert.equal(res.json().details.resetsAt, '2026-12-01T04:01:00.000Z');
      assert.equal(res.headers['retry-after'], '50');
      assert.equal(rateHeaders(res).remaining, 0);
    }
    assert.equal((await used(ctx, t)).minute, 3, 'refusals consume nothing');
    ctx.clock.set(at('2026-12-01T04:01:00.000Z'));
    const next = await call(ctx, 'POST', '/v1/runs', { secret: t.secret, workspaceId: t.workspace.id, body: bad, headers: { 'idempotency-key': randomUUID() } });
    assertStatus(next, 400, 'INVALID_INPUT');
  });
}, testKeySuite());

/** A usage ledger row (the runs module's record of spending), with the allocation shrunk to match. */
async function spend(deps: Deps, workspaceId: string, allocationId: string, amount: number, keyId: string | null, createdAt: number, type = 'usage') {
  await deps.db.transaction().execute(async (trx) => {
    const row = await trx.selectFrom('credit_allocations').select('remaining_mc').where('id', '=', allocationId).executeTakeFirstOrThrow();
    await trx.updateTable('credit_allocations').set({ remaining_mc: Number(row.remaining_mc) - amount }).where('id', '=', allocationId).execute();
    await billing.appendLedger(trx, {
      id: newId(),
      workspaceId,
      type,
      amountMillicents: -amount,
      allocationId,
      keyId,
      toolSlug: 'image-generate',
      jobId: newId(),
      executionOrigin: 'api',
      createdAt,
    });
  });
}

async function hold(deps: Deps, workspaceId: string, keyId: string | null, amount: number, released = false) {
  await deps.db
    .insertInto('credit_holds')
    .values({ id: newId(), workspace_id: workspaceId, job_id: newId(), key_id: keyId, amount_mc: amount, created_at_ms: deps.clock.now(), released_at_ms: released ? deps.clock.now() : null })
    .execute();
}

function budget(data: any, scope: string, period: string) {
  const matches = data.budgets.filter((b: any) => b.scope === scope && b.period === period);
  assert.ok(matches.length <= 1, `one ${scope}/${period} entry`);
  return matches[0];
}

describeEachDatabase('usage report', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('usage report: shape is exactly the spec Usage (points, budgets, streams) for a pro plan', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:00:30.000Z'));
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const res = await getAs(ctx, t.secret, t.workspace.id, '/v1/usage');
    assertStatus(res, 200, 'PUBLIC_USAGE_GET');
    const body = res.json();
    assert.deepEqual(Object.keys(body).sort(), ['code', 'data', 'message', 'success']);
    assert.deepEqual(body.data, {
      workspaceId: t.workspace.id,
      livemode: true,
      plan: 'pro',
      points: {
        minuteLimit: 3_600,
        minuteUsed: 1,
        minuteResetsAt: '2026-11-18T12:01:00.000Z',
        monthlyLimit: 1_000_000,
        monthlyUsed: 1,
        monthlyResetsAt: '2026-12-01T00:00:00.000Z',
      },
      budgets: [],
      streams: { enabled: true, maximum: 3 },
    });
  });

  test('usage report: streams are enabled with maximum 3 on pro only; free and starter report false/0 and their plan limits', async () => {
    const ctx = get();
    ctx.clock.set(at('2026-11-18T12:05:00.000Z'));
    for (const [plan, enabled, maximum, minute, month] of [
      ['free', false, 0, 240, 10_000],
      ['starter', false, 0, 1_200, 200_000],
      ['pro', true, 3, 3_600, 1_000_000],
    ] as const) {
      const t = await seedTenant(ctx.deps, { plan });
      const data = await usage(ctx, t);
      assert.equal(data.plan, plan);
      assert.deepEqual(data.streams, { enabled, maximum }, plan);
      assert.equal(data.points.minuteLimit, minute);
      assert.equal(data.points.monthlyLimit, month);
    }
  });

  test('usage report budgets: key ceilings set at key creation and workspace ceilings from settings appear with limit, spent, reserved and resetsAt', async () => {
    const ctx = get();
    const now = at('2026-11-18T12:00:00.000Z'); // a Wednesday
    ctx.clock.set(now);
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const created = await admin(ctx, '/admin/v1/keys', {
      userId: t.user.id,
      workspaceIds: [t.workspace.id],
      scopes: ['usage:read', 'billing:read'],
      operations: [],
      transports: ['rest'],
      budgets: { dailyMillicents: 1_000, weeklyMillicents: 5_000, monthlyMillicents: 20_000 },
    });
    assertStatus(created, 200, 'ADMIN_KEYS_CREATE');
    const k1 = { id: created.json().data.key.id as string, secret: created.json().data.secret as string };
    const k2 = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { budgets: { dailyMillicents: 700 } });
    await settings(ctx, t.workspace.id, { budgets: { dailyMillicents: 30_000, monthlyMillicents: 90_000 } });

    const alloc = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000_000 });
    const ws = t.workspace.id;
    await spend(ctx.deps, ws, alloc.id, 100, k1.id, at('2026-11-18T00:00:00.000Z')); // today, first instant
    await spend(ctx.deps, ws, alloc.id, 200, k1.id, at('2026-11-17T23:59:59.999Z')); // yesterday, this week
    await spend(ctx.deps, ws, alloc.id, 400, k1.id, at('2026-11-16T00:00:00.000Z')); // Monday: this week
    await spend(ctx.deps, ws, alloc.id, 800, k1.id, at('2026-11-15T23:59:59.999Z')); // Sunday: last week, this month
    await spend(ctx.deps, ws, alloc.id, 1_600, k1.id, at('2026-11-01T00:00:00.000Z')); // this month, first instant
    await spend(ctx.deps, ws, alloc.id, 3_200, k1.id, at('2026-10-31T23:59:59.999Z')); // last month
    await spend(ctx.deps, ws, alloc.id, 6_400, k2.key.id, at('2026-11-18T11:00:00.000Z')); // the other key, today
    await spend(ctx.deps, ws, alloc.id, 12_800, k1.id, at('2026-11-18T11:30:00.000Z'), 'expiration'); // not usage
    const other = await seedTenant(ctx.deps, { plan: 'pro' });
    const otherAlloc = await grantCredits(ctx.deps, other.workspace.id, { amountMillicents: 100_000 });
    await spend(ctx.deps, other.workspace.id, otherAlloc.id, 25_600, other.key.id, at('2026-11-18T11:00:00.000Z'));
    await hold(ctx.deps, ws, k1.id, 500);
    await hold(ctx.deps, ws, k1.id, 1_000, true);
    await hold(ctx.deps, ws, k2.key.id, 2_000);
    await hold(ctx.deps, other.workspace.id, other.key.id, 4_000);

    const data = await usage(ctx, { secret: k1.secret, workspace: t.workspace });
    assert.equal(data.budgets.length, 5, JSON.stringify(data.budgets));
    const day = '2026-11-19T00:00:00.000Z';
    const week = '2026-11-23T00:00:00.000Z';
    const month = '2026-12-01T00:00:00.000Z';
    assert.deepEqual(budget(data, 'key', 'day'), { scope: 'key', period: 'day', limitMillicents: 1_000, spentMillicents: 100, reservedMillicents: 500, resetsAt: day });
    assert.deepEqual(budget(data, 'key', 'week'), { scope: 'key', period: 'week', limitMillicents: 5_000, spentMillicents: 700, reservedMillicents: 500, resetsAt: week });
    assert.deepEqual(budget(data, 'key', 'month'), { scope: 'key', period: 'month', limitMillicents: 20_000, spentMillicents: 3_100, reservedMillicents: 500, resetsAt: month });
    assert.deepEqual(budget(data, 'workspace', 'day'), { scope: 'workspace', period: 'day', limitMillicents: 30_000, spentMillicents: 6_500, reservedMillicents: 2_500, resetsAt: day });
    assert.deepEqual(budget(data, 'workspace', 'month'), { scope: 'workspace', period: 'month', limitMillicents: 90_000, spentMillicents: 9_500, reservedMillicents: 2_500, resetsAt: month });
    assert.equal(budget(data, 'workspace', 'week'), undefined, 'no workspace weekly ceiling is set');

    // The other key sees its own key ceiling and the shared workspace ceilings.
    const data2 = await usage(ctx, { secret: k2.secret, workspace: t.workspace });
    assert.deepEqual(budget(data2, 'key', 'day'), { scope: 'key', period: 'day', limitMillicents: 700, spentMillicents: 6_400, reservedMillicents: 2_000, resetsAt: day });
    assert.equal(budget(data2, 'key', 'week'), undefined);
    assert.deepEqual(budget(data2, 'workspace', 'day'), budget(data, 'workspace', 'day'));

    // Clearing a workspace ceiling removes it from the report.
    await settings(ctx, t.workspace.id, { budgets: { dailyMillicents: null } });
    const data3 = await usage(ctx, { secret: k1.secret, workspace: t.workspace });
    assert.equal(budget(data3, 'workspace', 'day'), undefined);
    assert.equal(data3.budgets.length, 4);
    await assertLedgerInvariants(ctx.deps, ws);
    await assertLedgerInvariants(ctx.deps, other.workspace.id);
  });

  test('usage report budgets: a key ceiling counts the key\'s spending and holds in all its workspaces (as admission does); a workspace ceiling only its own', async () => {
    const ctx = get();
    const now = at('2026-11-18T15:00:00.000Z');
    ctx.clock.set(now);
    const t = await seedTenant(ctx.deps, { plan: 'pro' });
    const b = await createWorkspace(ctx.deps, { name: 'B', plan: 'pro', ownerUserId: t.user.id });
    const k = await seedKey(ctx.deps, t.user.id, [t.workspace.id, b.id], { budgets: { dailyMillicents: 10_000 } });
    await settings(ctx, t.workspace.id, { budgets: { dailyMillicents: 50_000 } });
    const allocA = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100_000 });
    const allocB = await grantCredits(ctx.deps, b.id, { amountMillicents: 100_000 });
    await spend(ctx.deps, t.workspace.id, allocA.id, 1_000, k.key.id, now);
    await spend(ctx.deps, b.id, allocB.id, 2_000, k.key.id, now);
    await spend(ctx.deps, b.id, allocB.id, 4_000, null, now);
    await hold(ctx.deps, b.id, k.key.id, 500);
    await hold(ctx.deps, b.id, null, 8_000);
    const data = await usage(ctx, { secret: k.secret, workspace: t.workspace });
    assert.deepEqual(budget(data, 'key', 'day'), { scope: 'key', period: 'day', limitMillicents: 10_000, spentMillicents: 3_000, reservedMillicents: 500, resetsAt: '2026-11-19T00:00:00.000Z' });
    assert.deepEqual(budget(data, 'workspace', 'day'), { scope: 'workspace', period: 'day', limitMillicents: 50_000, spentMillicents: 1_000, reservedMillicents: 0, resetsAt: '2026-11-19T00:00:00.000Z' });
    const fromB = await usage(ctx, { secret: k.secret, workspace: b });
    assert.deepEqual(budget(fromB, 'key', 'day'), budget(data, 'key', 'day'), 'the key budget is the same seen from either workspace');
    assert.equal(budget(fromB, 'workspace', 'day'), undefined, 'workspace B has no ceiling');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, b.id);
  });

  test('usage report budgets: resetsAt is the next UTC midnight, next Monday 00:00Z and first of next month (Sunday and year end)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { plan: 'pro', key: { budgets: { dailyMillicents: 1, weeklyMillicents: 2, monthlyMillicents: 3 } } });
    const resets = async () => {
      const data = await usage(ctx, t);
      return Object.fromEntries(data.budgets.map((b: any) => [b.period, b.resetsAt]));
    };
    ctx.clock.set(at('2026-11-22T23:59:59.999Z')); // Sunday, last millisecond
    assert.deepEqual(await resets(), { day: '2026-11-23T00:00:00.000Z', week: '2026-11-23T00:00:00.000Z', month: '2026-12-01T00:00:00.000Z' });
    ctx.clock.set(at('2026-11-23T00:00:00.000Z')); // Monday, first instant
    assert.deepEqual(await resets(), { day: '2026-11-24T00:00:00.000Z', week: '2026-11-30T00:00:00.000Z', month: '2026-12-01T00:00:00.000Z' });
    ctx.clock.set(at('2026-12-31T18:00:00.000Z')); // Thursday, year end
    assert.deepEqual(await resets(), { day: '2027-01-01T00:00:00.000Z', week: '2027-01-04T00:00:00.000Z', month: '2027-01-01T00:00:00.000Z' });
    ctx.clock.set(at('2028-02-29T12:00:00.000Z')); // leap day, a Tuesday
    assert.deepEqual(await resets(), { day: '2028-03-01T00:00:00.000Z', week: '2028-03-06T00:00:00.000Z', month: '2028-03-01T00:00:00.000Z' });
    const data = await usage(ctx, t);
    assert.equal(data.points.monthlyResetsAt, '2028-03-01T00:00:00.000Z');
    assert.equal(data.points.minuteResetsAt, '2028-02-29T12:01:00.000Z');
  });

  test('usage report budgets: spending of a past period does not count once the period resets', async () => {
    const ctx = get();
    const now = at('2029-01-10T10:00:00.000Z');
    ctx.clock.set(now);
    const t = await seedTenant(ctx.deps, { plan: 'pro', key: { budgets: { dailyMillicents: 10_000 } } });
    const alloc = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 50_000 });
    await spend(ctx.deps, t.workspace.id, alloc.id, 4_000, t.key.id, now);
    assert.equal(budget(await usage(ctx, t), 'key', 'day').spentMillicents, 4_000);
    ctx.clock.set(at('2029-01-11T00:00:00.000Z'));
    const b = budget(await usage(ctx, t), 'key', 'day');
    assert.equal(b.spentMillicents, 0);
    assert.equal(b.resetsAt, '2029-01-12T00:00:00.000Z');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
  });
}, testKeySuite());
