/**
 * Shared route tests run for every public endpoint: authentication, workspace, scope, envelope.
 * The refusals of runs are a test key's (simulated work, the test balance). The per-endpoint
 * cases that must succeed use test keys too (support/endpoints.ts sets up in the key's mode: test
 * credits, webhooks and events of the test twin); the refusals before anything runs (401, 400,
 * 403) are asked with live keys, which run nothing.
 */
import { before, test } from 'node:test';
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, testKeySuite } from '../support/harness.js';
import { endpointHeaders, endpointName, PUBLIC_ENDPOINTS, prepareEndpoint } from '../support/endpoints.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { checkRefusals, openapiPath, servedOpenApi } from '../support/openapi-responses.js';
import { assertError } from '../support/assertions.js';

/** decisions.md 1: every authenticated response carries the minute window's RateLimit headers. */
function assertRateLimitHeaders(res: { headers: Record<string, unknown>; statusCode: number }, what: string) {
  for (const h of ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset']) assert.match(String(res.headers[h]), /^\d+$/, `${what} (${res.statusCode}): ${h}`);
}


describeEachDatabase('shared route rules', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test('the served OpenAPI document describes interface version 1.0.0 and every route of the matrix', async () => {
    const { doc } = await servedOpenApi(get().app);
    assert.equal(doc.info.version, '1.0.0', 'spec Versioning: the interface description is versioned 1.0.0');
    for (const ep of PUBLIC_ENDPOINTS) assert.ok(doc.paths[openapiPath(ep.url)]?.[ep.method.toLowerCase()], `${endpointName(ep)} is documented`);
  });

  test('decisions.md 1: authenticated error responses carry the RateLimit headers too (400, 402, 404, 409, 429 with Retry-After)', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10, mode: 'test' });
    assert.equal((await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { waitingJobs: 1 } })).statusCode, 200);
    const as = { secret: t.secret, workspaceId: t.workspace.id };
    const runOf = (input: Record<string, unknown>, key = randomUUID()) => call(ctx, 'POST', '/v1/runs', { ...as, headers: { 'idempotency-key': key }, body: { operationId: 'music.generate', input } });
    const refusals: [string, LightMyRequestResponse, number, string][] = [
      ['invalid input', await call(ctx, 'POST', '/v1/estimates', { ...as, body: { operationId: 'music.generate', input: { prompt: '' } } }), 400, 'INVALID_INPUT'],
      ['unknown job', await call(ctx, 'GET', `/v1/jobs/${randomUUID()}`, as), 404, 'NOT_FOUND'],
      ['credits short', await runOf({ prompt: 'a tune' }), 402, 'INSUFFICIENT_CREDITS'],
    ];
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 1_000_000, mode: 'test' });
    const key = randomUUID();
    assert.equal((await runOf({ prompt: 'a tune' }, key)).statusCode, 202);
    refusals.push(['key reused', await runOf({ prompt: 'another tune' }, key), 409, 'IDEMPOTENCY_CONFLICT']);
    // One waiting job is the workspace's limit.
    refusals.push(['queue full', await runOf({ prompt: 'a tune' }), 429, 'QUEUE_FULL']);
    for (const [what, res, status, code] of refusals) {
      assertError(res, status, code);
      assertRateLimitHeaders(res, what);
    }
    assert.match(String(refusals.at(-1)![1].headers['retry-after']), /^\d+$/, 'a 429 carries Retry-After');
    await assertLedgerInvariants(ctx.deps, scopeOf(t));
  });
}, testKeySuite());

describeEachDatabase('shared route rules: every endpoint', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  for (const ep of PUBLIC_ENDPOINTS) {
    const name = endpointName(ep);
    const status = ep.status ?? 200;
    /** Fresh case headers (a new Idempotency-Key each time), merged with `extra`. */
    const headers = (extra: Record<string, string> = {}) => ({ ...endpointHeaders(ep), ...extra });

    test(`${name}: success is ${status} in the envelope with code ${ep.code}, X-Request-Id and RateLimit headers`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { credits: 5000, mode: 'test' });
      const prepared = await prepareEndpoint(ctx, ep, t);
      const res = await call(ctx, ep.method, prepared.url, { secret: t.secret, workspaceId: t.workspace.id, headers: headers(), body: prepared.body });
      assert.equal(res.statusCode, status, res.body);
      const body = res.json();
      assert.equal(body.success, true);
      assert.equal(body.code, ep.code);
      assert.equal(typeof body.message, 'string');
      assert.equal(typeof body.data, 'object');
      assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
      assertRateLimitHeaders(res, 'a success');
      // The body is what the served OpenAPI document says this route answers with this status.
      (await servedOpenApi(ctx.app)).assertResponse(ep.method, ep.url, status, body, name);
    });

    test(`${name}: no key is 401 UNAUTHENTICATED`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const res = await call(ctx, ep.method, ep.url, { workspaceId: t.workspace.id, headers: headers() });
      assertError(res, 401, 'UNAUTHENTICATED');
      (await servedOpenApi(ctx.app)).assertResponse(ep.method, ep.url, 401, res.json(), name);
    });

    test(`${name}: malformed, unknown and revoked keys are 401`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      for (const secret of ['nope', `wask_${'A'.repeat(43)}`, `${t.secret}x`, t.secret.toUpperCase()]) {
        assertError(await call(ctx, ep.method, ep.url, { secret, workspaceId: t.workspace.id, headers: headers() }), 401, 'UNAUTHENTICATED');
      }
      const basic = await call(ctx, ep.method, ep.url, { headers: headers({ authorization: `Basic ${t.secret}` }), workspaceId: t.workspace.id });
      assertError(basic, 401, 'UNAUTHENTICATED');
    });

    test(`${name}: a key in the query string is 401 even with a valid header`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      for (const param of ['api_key', 'apiKey', 'key', 'access_token', 'token']) {
        const res = await call(ctx, ep.method, ep.url, { secret: t.secret, workspaceId: t.workspace.id, headers: headers(), query: { [param]: t.secret } });
        assertError(res, 401, 'UNAUTHENTICATED');
      }
    });

    test(`${name}: missing or malformed workspace header is 400 INVALID_REQUEST`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      assertError(await call(ctx, ep.method, ep.url, { secret: t.secret, headers: headers() }), 400, 'INVALID_REQUEST');
      assertError(await call(ctx, ep.method, ep.url, { secret: t.secret, workspaceId: 'not-a-uuid', headers: headers() }), 400, 'INVALID_REQUEST');
    });

    test(`${name}: another workspace is 403 FORBIDDEN_WORKSPACE`, async () => {
      const ctx = get();
      const a = await seedTenant(ctx.deps);
      const b = await seedTenant(ctx.deps);
      assertError(await call(ctx, ep.method, ep.url, { secret: a.secret, workspaceId: b.workspace.id, headers: headers() }), 403, 'FORBIDDEN_WORKSPACE');
    });

    test(`${name}: a key without scope ${ep.scope} is 403 FORBIDDEN_SCOPE`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: SCOPES.filter((s) => s !== ep.scope) });
      const res = await call(ctx, ep.method, ep.url, { secret, workspaceId: t.workspace.id, headers: headers() });
      assertError(res, 403, 'FORBIDDEN_SCOPE');
      assertRateLimitHeaders(res, 'an authenticated refusal');
    });

    test(`${name}: a key without the REST transport is 403 FORBIDDEN_TRANSPORT`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const { secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { transports: ['mcp'] });
      const res = await call(ctx, ep.method, ep.url, { secret, workspaceId: t.workspace.id, headers: headers() });
      assertError(res, 403, 'FORBIDDEN_TRANSPORT');
      assertRateLimitHeaders(res, 'an authenticated refusal');
    });

    test(`${name}: costs ${ep.points} usage points`, async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps, { mode: 'test' });
      // Both setups first: a setup may spend points itself (seeding a job through POST /v1/runs),
      // and each request gets a resource of its own (a retry needs a job that is still failed).
      const p1 = await prepareEndpoint(ctx, ep, t);
      const p2 = await prepareEndpoint(ctx, ep, t);
      const first = await call(ctx, ep.method, p1.url, { secret: t.secret, workspaceId: t.workspace.id, headers: headers(), body: p1.body });
      const second = await call(ctx, ep.method, p2.url, { secret: t.secret, workspaceId: t.workspace.id, headers: headers(), body: p2.body });
      assert.equal(first.statusCode, status, first.body);
      assert.equal(second.statusCode, status, second.body);
      const r1 = Number(first.headers['ratelimit-remaining']);
      const r2 = Number(second.headers['ratelimit-remaining']);
      assert.equal(r1 - r2, ep.points);
    });
  }
}, testKeySuite());
