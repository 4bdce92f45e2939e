/**
 * GET /v1/usage/history (issue 36; docs/decisions.md, "Cost and usage analytics"): usage points
 * per UTC minute, hour and day, grouped by key and operation, with the 429s by details.limit in the
 * same buckets; the history agrees with the meter; its ranges and groups are checked; tenants
 * see their own only. Each test names the rule it checks. The tenant that runs an operation uses
 * test keys (simulated work, points counted in the test twin, read with the test key); the others
 * run nothing and stay live.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SPEC_OPERATION_WEIGHTS } from '../support/spec-weights.js';
import { UsageHistory } from '../../src/modules/usage/history.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { run } from '../support/jobs.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';

async function history(ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, params: Record<string, string | string[]>) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  return call(ctx, 'GET', `/v1/usage/history?${q}`, { secret: t.secret, workspaceId: t.workspace.id });
}

const get = (ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, url: string) => call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });

describeEachDatabase('usage history', (getCtx) => {
  test('rule "points by key and operation": each key\'s points per endpoint and per run operation, in the minute they were charged; the total is the meter\'s', async () => {
    const ctx = getCtx();
    ctx.clock.set(Date.UTC(2026, 10, 18, 12, 0, 30));
    const t = await seedTenant(ctx.deps, { credits: 100_000, mode: 'test' });
    const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const b = { secret: second.secret, workspace: t.workspace };
    assertOk(await get(ctx, t, '/v1/balance')); // 2 points
    assertOk(await get(ctx, t, '/v1/balance'));
    ctx.clock.advance(60_000);
    assertOk(await get(ctx, b, '/v1/costs')); // 2 points
    const chat = await run(ctx, b, 'chat.generate', { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10 });
    assert.equal(chat.statusCode, 200, chat.body);
    const res = await history(ctx, t, { bucket: 'minute', from: '2026-11-18T12:00:00Z', to: '2026-11-18T12:02:00Z', groupBy: ['keyId', 'operation'] });
    const data = assertOk(res).data;
    assert.equal(res.json().code, 'PUBLIC_USAGE_HISTORY_GET');
    assert.equal(data.livemode, false, 'the test key reads its test points');
    const [k1, k2] = [t.key.id, second.key.id];
    const sorted = (lines: any[]) => [...lines].sort((x, y) => (x.keyId + x.operation < y.keyId + y.operation ? -1 : 1));
    assert.deepEqual(data.buckets[0].lines, [{ keyId: k1, operation: 'GET /v1/balance', points: 4, refused: {} }]);
    assert.deepEqual(sorted(data.buckets[1].lines), sorted([
      { keyId: k2, operation: 'GET /v1/costs', points: 2, refused: {} },
      { keyId: k2, operation: 'chat.generate', points: SPEC_OPERATION_WEIGHTS['chat.generate'], refused: {} },
      // The history read itself (1 point), charged before it is answered.
      { keyId: k1, operation: 'GET /v1/usage/history', points: 1, refused: {} },
    ]));
    // By operation only: keys summed.
    const byOp = assertOk(await history(ctx, t, { bucket: 'hour', from: '2026-11-18T12:00:00Z', groupBy: 'operation' })).data;
    assert.deepEqual(byOp.totals.lines.find((l: any) => l.operation === 'GET /v1/balance'), { operation: 'GET /v1/balance', points: 4, refused: {} });
    // The day's total equals the month counter of the meter (which also counts this read and the usage read).
    const day = assertOk(await history(ctx, t, { bucket: 'day', from: '2026-11-18' })).data;
    const usage = assertOk(await get(ctx, t, '/v1/usage')).data;
    assert.equal(usage.points.monthlyUsed, day.totals.points + 1, 'history points = the meter\'s points');
    assert.deepEqual(day.totals.lines, [{ points: day.totals.points, refused: {} }], 'no groupBy: one line of the whole workspace');
    assert.equal(day.buckets[0].points, day.totals.points);
  });

  test('rule "429s by details.limit": refusals are counted in the bucket and under the key and operation refused', async () => {
    const ctx = getCtx();
    ctx.clock.set(Date.UTC(2026, 10, 18, 13, 0, 0));
    const t = await seedTenant(ctx.deps, { plan: 'free' }); // 240 points a minute
    let refused = 0;
    let served = 0;
    for (let i = 0; i < 125; i++) {
      const res = await get(ctx, t, '/v1/balance');
      if (res.statusCode === 429) {
        assert.equal(res.json().details.limit, 'POINTS_MINUTE');
        refused++;
      } else served++;
    }
    assert.equal(served, 120);
    assert.equal(refused, 5);
    ctx.clock.advance(60_000);
    const data = assertOk(await history(ctx, t, { bucket: 'minute', from: '2026-11-18T13:00:00Z', to: '2026-11-18T13:01:00Z', groupBy: 'operation' })).data;
    assert.deepEqual(data.buckets[0].lines, [{ operation: 'GET /v1/balance', points: 240, refused: { POINTS_MINUTE: 5 } }]);
    assert.deepEqual(data.totals.refused, { POINTS_MINUTE: 5 });
  });

  test('rule "bounded ranges, known groups": 400 INVALID_REQUEST naming the field', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps);
    const now = ctx.clock.now();
    const cases: [Record<string, string | string[]>, string][] = [
      [{ bucket: 'month' }, '/bucket'],
      [{ groupBy: 'executionOrigin' }, '/groupBy/0'],
      [{ bucket: 'minute', from: new Date(now - 2 * 86_400_000).toISOString() }, '/from'],
      [{ bucket: 'hour', from: new Date(now - 90 * 86_400_000).toISOString() }, '/from'],
      [{ bucket: 'day', from: '2024-01-01', to: '2026-01-01' }, '/to'],
      [{ from: 'soon' }, '/from'],
      [{ from: '2026-11-10', to: '2026-11-01' }, '/to'],
    ];
    for (const [params, pointer] of cases) {
      const body = assertError(await history(ctx, t, params), 400, 'INVALID_REQUEST');
      assert.ok(body.details.errors.some((e: any) => e.pointer === pointer), `${JSON.stringify(params)}: ${JSON.stringify(body.details)}`);
    }
    assertOk(await history(ctx, t, { bucket: 'minute', from: new Date(now - 23 * 3_600_000).toISOString() }));
  });

  test('rule "tenant isolation": a workspace\'s history holds only its own keys\' points; another workspace is 403; the scope is usage:read', async () => {
    const ctx = getCtx();
    const a = await seedTenant(ctx.deps);
    const b = await seedTenant(ctx.deps);
    for (let i = 0; i < 3; i++) assertOk(await get(ctx, a, '/v1/balance'));
    const mine = assertOk(await history(ctx, b, { bucket: 'day', groupBy: 'keyId' })).data;
    assert.deepEqual(mine.totals.lines.map((l: any) => l.keyId), [b.key.id]);
    assertError(await history(ctx, { secret: b.secret, workspace: a.workspace }, {}), 403, 'FORBIDDEN_WORKSPACE');
    const billingOnly = await seedKey(ctx.deps, a.user.id, [a.workspace.id], { scopes: ['billing:read'] });
    assertError(await history(ctx, { secret: billingOnly.secret, workspace: a.workspace }, {}), 403, 'FORBIDDEN_SCOPE');
  });

  test('rule "refused requests write nothing of their own": a 429\'s count waits for a write of its workspace\'s points, or for more than 10,000 waiting counts', async () => {
    const ctx = getCtx();
    ctx.clock.set(Date.UTC(2026, 10, 18, 14, 0, 0));
    const t = await seedTenant(ctx.deps, { plan: 'free' });
    for (let i = 0; i < 120; i++) assertOk(await get(ctx, t, '/v1/balance')); // the minute's 240 points
    await ctx.deps.usage.flush();
    const refusals = async () =>
      (await ctx.deps.db.selectFrom('usage_history').select(['span', 'count']).where('workspace_id', '=', t.workspace.id).where('kind', 'like', '429:%').execute()).map((r) => [r.span, Number(r.count)]);
    for (let i = 0; i < 2; i++) assert.equal((await get(ctx, t, '/v1/balance')).statusCode, 429);
    await ctx.deps.usage.flush();
    assert.deepEqual(await refusals(), [], 'the refusals wrote nothing');
    for (let i = 0; i < 3; i++) assert.equal((await get(ctx, t, '/v1/balance')).statusCode, 429);
    await ctx.deps.usage.flush();
    assert.deepEqual(await refusals(), [], 'still nothing after more refusals and a flush');
    ctx.clock.advance(60_000);
    assertOk(await get(ctx, t, '/v1/balance')); // points of the workspace: the counts ride on their write
    await ctx.deps.usage.flush();
    assert.deepEqual((await refusals()).sort(), [['day', 5], ['hour', 5], ['minute', 5]]);

    // Bounded memory: past 10,000 waiting counts, a flush writes them even without points.
    const history = new UsageHistory();
    const ws = t.workspace.id;
    for (let i = 0; i <= 10_000; i++) history.refused(ws, Date.UTC(2026, 10, 19) + i * 60_000, { keyId: t.key.id, operation: 'GET /v1/bounded' }, 'POINTS_MONTH');
    await history.flush(ctx.deps.db, ctx.clock.now(), false);
    assert.equal(history.pending, 0);
    const written = await ctx.deps.db.selectFrom('usage_history').select((eb) => eb.fn.sum<number>('count').as('n')).where('workspace_id', '=', ws).where('operation', '=', 'GET /v1/bounded').where('span', '=', 'minute').executeTakeFirst();
    assert.equal(Number(written?.n), 10_001);
  });
}, testKeySuite());
