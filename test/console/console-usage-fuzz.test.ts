/**
 * Property tests of the console's Usage page endpoints (src/console/routes-usage.ts) against the
 * public API as their oracle: random query strings of the costs and usage-history reads (buckets,
 * `from`/`to` in and out of range or malformed, repeated and unknown `groupBy` values, unknown
 * parameters) are answered by the console exactly as GET /v1/costs and /v1/usage/history answer
 * the same query with a key of the same workspace (status, code, message, details and data; `format`
 * is the public API's alone: 400 on the console); random `limit` and `cursor` values of the ledger,
 * balance and notifications reads page exactly as GET /v1/transactions, /v1/balance and the admin
 * API's notifications do (any other parameter is 400), a cursor of another workspace refused. Another user's or an unknown
 * workspace is 404 (or the query's own 400), never a 5xx, never a byte of the other tenant.
 * CONSOLE_FUZZ_RUNS (default 50) sets the number of runs of each property.
 *
 * The costs and usage-history property runs with test keys (issue 34) and SIMULATE_LIVE off
 * (testKeySuite): the workspaces spend from their test balances with test keys, and the console
 * reads with `mode=test` against the public API's answers to the test key. Live-only part: the
 * ledger, balance and notifications pages property (block "live pages") pages notifications,
 * which are the live workspace's (the admin API's list), so its workspaces spend with live keys
 * on the paid providers' fakes (`{ live: true }`, support/live-backend.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import * as accounts from '../../src/modules/accounts/service.js';
import { raiseExpiryNotices } from '../../src/modules/alerts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { assertEnvelope, assertNoForeignData } from '../support/api-fuzz.js';
import { check } from '../support/fast-check.js';
import { call, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, run } from '../support/jobs.js';
import { scopeOf, seedTenant, type Tenant } from '../support/seed.js';
import { consoleCall, signInAs, type ConsoleLogin } from '../support/console.js';
import { chatCosting, musicCosting } from '../support/sim-inputs.js';

const RUNS = Number(process.env.CONSOLE_FUZZ_RUNS ?? 50);

type Target = 'own' | 'foreign' | 'unknown' | 'malformed';

interface Scene {
  ctx: TestContext;
  mine: Tenant;
  theirs: Tenant;
  login: ConsoleLogin;
  /** Ids of the other tenant that must never appear in an answer to this user. */
  foreign: string[];
}

async function spend(ctx: TestContext, t: Tenant): Promise<void> {
  await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 50_000, expiresAt: ctx.clock.now() + 5 * 86_400_000, provenance: 'promotion', mode: t.key.mode });
  await raiseExpiryNotices(ctx.deps);
  await accounts.updateWorkspaceSettings(ctx.deps, t.workspace.id, { lowCreditsMillicents: 10_000_000 });
  for (const cost of [300, 800]) assert.equal((await run(ctx, t, 'chat.generate', chatCosting(cost))).statusCode, 200);
  assert.equal((await run(ctx, t, 'music.generate', musicCosting(1_000))).statusCode, 202);
  await drain(ctx);
}

async function scene(ctx: TestContext, mode: 'live' | 'test'): Promise<Scene> {
  const mine = await seedTenant(ctx.deps, { mode, credits: 1_000_000 });
  const theirs = await seedTenant(ctx.deps, { mode, credits: 1_000_000 });
  await spend(ctx, mine);
  await spend(ctx, theirs);
  const theirLedger = await ctx.deps.db.selectFrom('credit_transactions').select('id').where('workspace_id', '=', scopeOf(theirs)).execute();
  const theirAllocations = await ctx.deps.db.selectFrom('credit_allocations').select('id').where('workspace_id', '=', scopeOf(theirs)).execute();
  const theirNotices = await ctx.deps.db.selectFrom('notifications').select('id').where('workspace_id', 'in', [theirs.workspace.id, scopeOf(theirs)]).execute();
  assert.ok(theirLedger.length > 3 && theirAllocations.length === 2 && (mode === 'test' || theirNotices.length > 0));
  return {
    ctx,
    mine,
    theirs,
    login: await signInAs(ctx, mine.user.id),
    foreign: [theirs.workspace.id, theirs.key.id, theirs.user.id, ...[...theirLedger, ...theirAllocations, ...theirNotices].map((r) => r.id)],
  };
}

function workspaceOf(s: Scene, target: Target): string {
  if (target === 'own') return s.mine.workspace.id;
  if (target === 'foreign') return s.theirs.workspace.id;
  if (target === 'unknown') return '00000000-0000-4000-8000-00000000beef';
  return 'not-a-workspace';
}

const timeArb = fc.oneof(
  fc.constantFrom('2026-11-01', '2026-11-18', '2026-11-18T11:30:00Z', '2026-11-18T12:00:00+01:00', '2026-10-20', '2026-12-01', '2025-11-18', '2026-11-17T12:00:00.5Z'),
  fc.constantFrom('2026-02-30', 'yesterday', '1999-12-31', '2026-11-18T25:00:00Z', '9999-01-01', '', '2026-11-18T12:00:00+24:00'),
  fc.string({ maxLength: 12 }),
);
const queryArb = fc.record(
  {
    bucket: fc.constantFrom('minute', 'hour', 'day', 'month', 'week', '', 'DAY'),
    from: timeArb,
    to: timeArb,
    groupBy: fc.array(fc.constantFrom('operationId', 'keyId', 'executionOrigin', 'operation', 'jobId', ''), { maxLength: 4 }),
    format: fc.constantFrom('json', 'csv'),
    extra: fc.constantFrom('x', 'workspaceId', 'limit'),
  },
  { requiredKeys: [] },
);

function queryString(q: Record<string, unknown>): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (k === 'extra') params.append(v as string, '1');
    else if (Array.isArray(v)) for (const x of v) params.append(k, String(x));
    else params.append(k, String(v));
  }
  return params.toString();
}

/** The parts of an answer the console must share with the public API's answer to the same query. */
function comparable(res: { statusCode: number; json(): any }) {
  const body = res.json();
  return body.success ? { status: res.statusCode, data: body.data } : { status: res.statusCode, code: body.code, message: body.message, details: body.details };
}

describeEachDatabase('console usage fuzz', (get) => {
  test('costs and usage-history queries: the console answers as the public API answers the same query', async () => {
    const s = await scene(get(), 'test');
    const { ctx } = s;
    await check(
      fc.asyncProperty(queryArb, fc.constantFrom('costs', 'usage/history'), fc.constantFrom<Target>('own', 'own', 'own', 'foreign', 'unknown', 'malformed'), async (q, read, target) => {
        const qs = queryString(q);
        // The public read first: a usage-history read charges its own point and reports it; the console's charges none.
        const theirs = await call(ctx, 'GET', `/v1/${read}?${qs}`, { secret: s.mine.secret, workspaceId: s.mine.workspace.id });
        const res = await consoleCall(ctx, s.login, 'GET', `/console/api/workspaces/${workspaceOf(s, target)}/${read}?${qs ? `${qs}&` : ''}mode=test`);
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(s.foreign, qs, res.body, `${read}?${qs}`);
        if (res.statusCode !== 200) assertEnvelope(res);
        if (target === 'malformed' || q.format !== undefined) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', `${read}?${qs}: ${res.body}`);
        if (theirs.statusCode === 429) return; // the public read ran out of points; nothing to compare
        if (target !== 'own') {
          // The query is checked first (400 as on the public API), then the workspace: 404.
          if (theirs.statusCode === 400) assert.deepEqual(comparable(res), comparable(theirs), `${read}?${qs}`);
          else assert.equal(assertEnvelope(res).code, 'NOT_FOUND', res.body);
          return;
        }
        assert.deepEqual(comparable(res), comparable(theirs), `${read}?${qs}`);
      }),
      RUNS,
    );
  });

}, testKeySuite());

describeEachDatabase('console usage fuzz: live pages (live providers\' fakes, live-only)', (get) => {
  test('ledger, balance and notifications pages: limits and cursors as the public and admin APIs page them', async () => {
    const s = await scene(get(), 'live');
    const { ctx } = s;
    const pub = (url: string, secret = s.mine.secret, workspaceId = s.mine.workspace.id) => call(ctx, 'GET', url, { secret, workspaceId });
    const adminRead = (url: string) => call(ctx, 'GET', url, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    const reads = {
      transactions: { oracle: (qs: string) => pub(`/v1/transactions?${qs}`), foreign: () => pub('/v1/transactions?limit=1', s.theirs.secret, s.theirs.workspace.id) },
      balance: { oracle: (qs: string) => pub(`/v1/balance?${qs}`), foreign: () => pub('/v1/balance?limit=1', s.theirs.secret, s.theirs.workspace.id) },
      notifications: {
        oracle: (qs: string) => adminRead(`/admin/v1/workspaces/${s.mine.workspace.id}/notifications?${qs}`),
        foreign: () => adminRead(`/admin/v1/workspaces/${s.theirs.workspace.id}/notifications?limit=1`),
      },
    } as const;
    const cursors: Record<string, Record<string, string>> = {};
    for (const [name, r] of Object.entries(reads)) {
      const own = (await r.oracle('limit=1')).json().data.nextCursor as string;
      const foreign = (await r.foreign()).json().data.nextCursor as string;
      assert.ok(own && foreign, `${name} has a second page`);
      cursors[name] = { own, foreign, garbage: 'abc.def' };
    }
    const pageArb = fc.record(
      {
        limit: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.constantFrom('0', '101', 'ten', '-1', '1.5', '')),
        cursor: fc.oneof(fc.constantFrom('own', 'foreign', 'garbage'), fc.string({ maxLength: 30 })),
        extra: fc.constantFrom('x', 'from', 'bucket'),
      },
      { requiredKeys: [] },
    );
    await check(
      fc.asyncProperty(pageArb, fc.constantFrom<keyof typeof reads>('transactions', 'balance', 'notifications'), fc.constantFrom<Target>('own', 'own', 'own', 'foreign', 'unknown', 'malformed'), async (q, read, target) => {
        const params = new URLSearchParams();
        if (q.limit !== undefined) params.set('limit', String(q.limit));
        if (q.cursor !== undefined) params.set('cursor', cursors[read]![q.cursor] ?? q.cursor);
        if (q.extra !== undefined) params.set(q.extra, '1');
        const qs = params.toString();
        const res = await consoleCall(ctx, s.login, 'GET', `/console/api/workspaces/${workspaceOf(s, target)}/${read}?${qs}`);
        assert.ok(res.statusCode < 500, res.body);
        assertNoForeignData(s.foreign, qs, res.body, `${read}?${qs}`);
        if (res.statusCode !== 200) assertEnvelope(res);
        const theirs = await reads[read].oracle(qs);
        // The console's pages take limit and cursor only (the public ledger's from/to are not among them).
        if (target === 'malformed' || q.extra !== undefined) return void assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', res.body);
        if (target !== 'own') {
          if (theirs.statusCode === 400 && assertEnvelope(theirs).code === 'INVALID_REQUEST') assert.equal(assertEnvelope(res).code, 'INVALID_REQUEST', res.body);
          else assert.ok(['NOT_FOUND', 'INVALID_CURSOR'].includes(assertEnvelope(res).code), res.body);
          return;
        }
        assert.deepEqual(comparable(res), comparable(theirs), `${read}?${qs}`);
      }),
      RUNS,
    );
  });
}, { live: true });
