/**
 * Property test of the authentication boundary (spec Authentication 1, 4, 5; decisions.md
 * sections 1 and 3): random Authorization headers, X-Service-Workspace values and query strings
 * against the key-authenticated read endpoints, with two tenants A and B holding credits.
 *
 * For every request: never a 5xx; every error is the error envelope with a registered code and
 * its registered status; a request that does not present exactly one tenant's secret (or puts a
 * key in the query string) is 401; an authenticated request for a workspace other than its own
 * is 403; and a 200 carries only the caller's own workspace and never an id of the other
 * tenant's workspace, user, key, allocations or ledger entries.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { isUuid } from '../../src/lib/ids.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { QUERY_KEY_PARAMS } from '../../src/modules/auth/service.js';
import { describeEachDatabase, type TestContext } from '../support/harness.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { assertRegisteredError } from '../support/assertions.js';
import { swapOneCase } from '../support/api-fuzz.js';

const RUNS = Number(process.env.AUTH_FUZZ_RUNS ?? 200);
const ENDPOINTS = ['/v1/usage', '/v1/balance', '/v1/transactions', '/v1/workspaces'] as const;
const KEY_PARAM_NAMES = new Set(QUERY_KEY_PARAMS.map((p) => p.toLowerCase()));
const SECRET_IN_TEXT = /wask_[A-Za-z0-9_-]{43}/;

/** Characters a real HTTP header value can hold (RFC 9110 field-value: VCHAR, SP, HTAB, obs-text). */
const headerChar = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 1, arbitrary: fc.constant(0x09) },
  { weight: 1, arbitrary: fc.integer({ min: 0x80, max: 0xff }) },
).map((c) => String.fromCharCode(c));
const headerString = fc.array(headerChar, { maxLength: 80 }).map((cs) => cs.join(''));

interface Fixture {
  a: Tenant;
  b: Tenant;
  /** Every id belonging to a tenant, to look for in the other tenant's responses. */
  ids: Map<Tenant, string[]>;
}

async function tenantIds(ctx: TestContext, t: Tenant): Promise<string[]> {
  const allocations = await ctx.deps.db.selectFrom('credit_allocations').select('id').where('workspace_id', '=', t.workspace.id).execute();
  const ledger = await ctx.deps.db.selectFrom('credit_transactions').select('id').where('workspace_id', '=', t.workspace.id).execute();
  assert.ok(allocations.length >= 2 && ledger.length >= 2, 'the tenant has data to leak');
  return [t.workspace.id, t.user.id, t.key.id, ...allocations.map((r) => r.id), ...ledger.map((r) => r.id)];
}

function authorizationArb(f: Fixture): fc.Arbitrary<string | undefined> {
  const secret = fc.constantFrom(f.a.secret, f.b.secret);
  const mutated = fc.tuple(secret, fc.nat(), fc.constantFrom(
    (s: string) => ` Bearer ${s} `,
    (s: string) => `Bearer  ${s}`,
    (s: string) => `Bearer\t${s}`,
    (s: string) => `bearer ${s}`,
    (s: string) => `BEARER ${s}`,
    (s: string) => `Bearer ${s.toUpperCase()}`,
    (s: string) => `Bearer ${s.toLowerCase()}`,
    (s: string) => `Bearer ${s.slice(0, -1)}`,
    (s: string) => `Bearer ${s}=`,
    (s: string) => `Bearer ${s} ${s}`,
    (s: string) => `Basic ${s}`,
    (s: string) => s,
    (s: string) => `Bearer wask_${s.slice(5).split('').reverse().join('')}`,
  )).map(([s, n, f2]) => (n % 5 === 0 ? `Bearer ${swapOneCase(s, n)}` : f2(s)));
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerString },
    { weight: 1, arbitrary: headerString.map((s) => `Bearer ${s}`) },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((s) => `Bearer wask_${s}`) },
    { weight: 6, arbitrary: secret.map((s) => `Bearer ${s}`) },
    { weight: 3, arbitrary: mutated },
  );
}

function workspaceArb(f: Fixture): fc.Arbitrary<string | undefined> {
  const ids = fc.constantFrom(f.a.workspace.id, f.b.workspace.id);
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(undefined) },
    { weight: 1, arbitrary: headerString },
    { weight: 1, arbitrary: fc.uuid() },
    { weight: 4, arbitrary: ids },
    { weight: 2, arbitrary: ids.map((id) => id.toUpperCase()) },
    { weight: 2, arbitrary: fc.tuple(ids, fc.nat()).map(([id, n]) => swapOneCase(id, n)) },
    { weight: 1, arbitrary: ids.map((id) => `${id}, ${id}`) },
    { weight: 1, arbitrary: ids.map((id) => ` ${id}`) },
  );
}

function queryArb(f: Fixture): fc.Arbitrary<Record<string, string>> {
  const value = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.integer({ min: -5, max: 150 }).map(String),
    fc.constantFrom(f.a.workspace.id, f.b.workspace.id),
  );
  const ordinary = fc.dictionary(fc.oneof(fc.constantFrom('limit', 'cursor', 'x'), fc.string({ maxLength: 12 })), value, { maxKeys: 3 });
  // Key parameters (any case) or a secret in any value: 401 even with a valid header.
  const withKey = fc.tuple(
    ordinary,
    fc.constantFrom(...QUERY_KEY_PARAMS, 'API_KEY', 'Token', 'Access_Token', 'q'),
    fc.oneof(fc.string({ maxLength: 10 }), fc.constantFrom(f.a.secret, f.b.secret)),
  ).map(([q, k, v]) => ({ ...q, [k]: k === 'q' ? `${v}${f.a.secret}` : v }));
  return fc.oneof({ weight: 3, arbitrary: fc.constant({}) }, { weight: 3, arbitrary: ordinary }, { weight: 1, arbitrary: withKey });
}

/** Who the server must take the caller for: the tenant whose exact secret is presented, else nobody. */
function expectedCaller(f: Fixture, authorization: string | undefined): Tenant | undefined {
  const m = authorization === undefined ? null : /^Bearer (\S+)$/i.exec(authorization.trim());
  if (!m) return undefined;
  if (m[1] === f.a.secret) return f.a;
  if (m[1] === f.b.secret) return f.b;
  return undefined;
}

function queryCarriesKey(query: Record<string, string>): boolean {
  return Object.entries(query).some(([k, v]) => KEY_PARAM_NAMES.has(k.toLowerCase()) || SECRET_IN_TEXT.test(k) || SECRET_IN_TEXT.test(v));
}


describeEachDatabase('auth fuzz', (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
  test(`property (${RUNS} runs): random keys, workspace headers and query strings never give a 5xx, always a registered error envelope, and never another tenant's data`, async (t) => {
    const ctx = get();
    const a = await seedTenant(ctx.deps, { credits: 5_000 });
    const b = await seedTenant(ctx.deps, { credits: 7_000 });
    await grantCredits(ctx.deps, a.workspace.id, { amountMillicents: 1_111 });
    await grantCredits(ctx.deps, b.workspace.id, { amountMillicents: 2_222 });
    const f: Fixture = { a, b, ids: new Map() };
    f.ids.set(a, await tenantIds(ctx, a));
    f.ids.set(b, await tenantIds(ctx, b));
    const stats = { ok: 0, unauthenticated: 0, forbidden: 0, invalid: 0, suspended: 0 };

    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ENDPOINTS),
        authorizationArb(f),
        workspaceArb(f),
        queryArb(f),
        fc.integer({ min: 0, max: 20_000 }),
        async (url, authorization, workspace, query, advanceMs) => {
          ctx.clock.advance(advanceMs);
          const headers: Record<string, string> = {};
          if (authorization !== undefined) headers.authorization = authorization;
          if (workspace !== undefined) headers['x-service-workspace'] = workspace;
          const res = await ctx.app.inject({ method: 'GET', url, headers, query });
          assert.ok(res.statusCode < 500, `no 5xx: ${res.statusCode} ${res.body}`);
          assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);

          const caller = expectedCaller(f, authorization);
          if (caller === undefined || queryCarriesKey(query)) {
            assert.equal(assertRegisteredError(res, res.headers['x-request-id'] as string | undefined).code, 'UNAUTHENTICATED', `unauthenticated request: ${res.body}`);
            stats.unauthenticated += 1;
            return;
          }
          const other = caller === a ? b : a;
          if (res.statusCode !== 200) {
            const { code } = assertRegisteredError(res, res.headers['x-request-id'] as string | undefined);
            if (code === 'KEY_SUSPENDED') {
              const row = await ctx.deps.db.selectFrom('api_keys').select('suspended_until_ms').where('id', '=', caller.key.id).executeTakeFirstOrThrow();
              assert.ok(row.suspended_until_ms !== null && Number(row.suspended_until_ms) > ctx.clock.now(), 'suspended only while the key row says so');
              stats.suspended += 1;
            } else if (workspace === undefined || !isUuid(workspace)) {
              assert.equal(code, 'INVALID_REQUEST');
              stats.invalid += 1;
            } else if (workspace.toLowerCase() !== caller.workspace.id) {
              assert.equal(code, 'FORBIDDEN_WORKSPACE');
              stats.forbidden += 1;
            } else {
              // Own workspace: only the query string can be wrong.
              assert.ok(['INVALID_REQUEST', 'INVALID_CURSOR'].includes(code), `own workspace refused with ${code}`);
              assert.ok(url === '/v1/balance' || url === '/v1/transactions', `${url} takes no query parameters that can fail`);
              stats.invalid += 1;
            }
            return;
          }

          // 200: the caller's own workspace, exactly, and nothing of the other tenant.
          assert.ok(workspace !== undefined && workspace.toLowerCase() === caller.workspace.id, `200 only for the caller's workspace (${workspace})`);
          const body = res.json();
          assert.equal(body.success, true);
          for (const id of f.ids.get(other)!) assert.equal(res.body.includes(id), false, `response leaks the other tenant's id ${id}`);
          if (url === '/v1/workspaces') assert.deepEqual(body.data.items.map((w: { id: string }) => w.id), [caller.workspace.id]);
          else assert.equal(body.data.workspaceId ?? caller.workspace.id, caller.workspace.id);
          stats.ok += 1;
        },
      ),
      { numRuns: RUNS },
    );
    // The generators reach every branch (a property that only ever saw 401s would prove little).
    t.diagnostic(`outcomes: ${JSON.stringify(stats)}`);
    assert.ok(stats.ok > 0 && stats.unauthenticated > 0 && stats.forbidden + stats.suspended > 0 && stats.invalid > 0, JSON.stringify(stats));
    await assertLedgerInvariants(ctx.deps, a.workspace.id);
    await assertLedgerInvariants(ctx.deps, b.workspace.id);
  });
});
