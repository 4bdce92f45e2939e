/**
 * The console's Usage page endpoints (issue 35, item 6) over HTTP: the balance, the ledger, the
 * costs, the usage history, the points and budgets and the notifications of a workspace equal what
 * the public API (GET /v1/balance, /v1/transactions, /v1/costs, /v1/usage/history, /v1/usage,
 * called with a key of that workspace) and the admin API (notifications) answer for it; the
 * console's reads charge no usage points; every member reads them, the keys' budgets only owners
 * and admins; another user's workspace is 404 on every endpoint, as is an unknown one; no session
 * is 401 and an API key is refused; bad queries are 400 INVALID_REQUEST like the public API's.
 *
 * Runs with test keys (issue 34) and SIMULATE_LIVE off (testKeySuite): the workspaces spend from
 * their test balances with test keys, and the console's reads are made with `mode=test` (the
 * shell's test-mode switch), compared with what the public API answers the test keys.
 *
 * Live-only part: notifications (alerts) are the live workspace's, as the admin API lists them;
 * the block "console usage: live alerts" makes a live workspace spend on the paid providers'
 * fakes (`{ live: true }`, support/live-backend.ts) to raise them.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as accounts from '../../src/modules/accounts/service.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { raiseExpiryNotices } from '../../src/modules/alerts/service.js';
import { call, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { drain, run } from '../support/jobs.js';
import { seedKey, seedTenant, uniqueEmail, type Tenant } from '../support/seed.js';
import { consoleCall, signInAs, type ConsoleLogin } from '../support/console.js';
import { chatCosting, musicCosting } from '../support/sim-inputs.js';

const DAY = 86_400_000;

const base = (workspaceId: string) => `/console/api/workspaces/${workspaceId}`;
/** A read in test mode (the test keys' balance, ledger, costs, usage history and usage). */
const tm = (url: string) => `${url}${url.includes('?') ? '&' : '?'}mode=test`;

/** The console's read paths of a workspace, each with the query the Usage page sends. */
const READS = (workspaceId: string) => [
  `${base(workspaceId)}/balance`,
  `${base(workspaceId)}/transactions`,
  `${base(workspaceId)}/costs?bucket=day&groupBy=operationId`,
  `${base(workspaceId)}/usage/history?bucket=minute`,
  `${base(workspaceId)}/usage`,
].map(tm).concat(`${base(workspaceId)}/notifications`);

/** A workspace that spent: two keys (one with budgets), an expiring allocation, sync and queued runs, a budget alert. */
async function spendingTenant(ctx: TestContext, mode: 'live' | 'test' = 'test'): Promise<Tenant & { second: { key: { id: string }; secret: string } }> {
  const t = await seedTenant(ctx.deps, { mode, credits: 500_000, key: { budgets: { dailyMillicents: 2_000, monthlyMillicents: 50_000 } } });
  await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 30_000, expiresAt: ctx.clock.now() + 5 * DAY, provenance: 'promotion', mode });
  // A threshold above the balance: the first hold raises credits.low.
  await accounts.updateWorkspaceSettings(ctx.deps, t.workspace.id, { budgets: { weeklyMillicents: 100_000 }, lowCreditsMillicents: 10_000_000 });
  if (mode === 'live') assert.equal(await raiseExpiryNotices(ctx.deps), 1, 'allocation.expiring');
  const second = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode });
  for (const cost of [300, 700]) assert.equal((await run(ctx, t, 'chat.generate', chatCosting(cost))).statusCode, 200);
  ctx.clock.advance(DAY);
  // (Live: the music route's hold, its prediction deadline's worth, exceeds the weekly ceiling; the live alerts need only the chats.)
  if (mode === 'test') assert.equal((await run(ctx, { secret: second.secret, workspace: t.workspace }, 'music.generate', musicCosting(1_200))).statusCode, 202);
  await drain(ctx);
  assert.equal((await run(ctx, t, 'chat.generate', chatCosting(1_500))).statusCode, 200);
  return { ...t, second };
}

const pub = (ctx: TestContext, t: Pick<Tenant, 'secret' | 'workspace'>, url: string) => call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });

describeEachDatabase('console usage', (get) => {
  test('balance, ledger, costs and usage history equal the public API\'s answers for the same workspace', async () => {
    const ctx = get();
    const t = await spendingTenant(ctx);
    const login = await signInAs(ctx, t.user.id);

    const balance = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/balance`)));
    assert.equal(balance.code, 'CONSOLE_BALANCE_GET');
    assert.deepEqual(balance.data, assertOk(await pub(ctx, t, '/v1/balance')).data);
    assert.equal(balance.data.allocations.length, 2);
    assert.ok(balance.data.allocations.some((a: { expiresAt: string | null; provenance: string }) => a.expiresAt !== null && a.provenance === 'promotion'));
    assert.equal(balance.data.totalMillicents, balance.data.spendableMillicents + balance.data.reservedMillicents);

    const ledger = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/transactions`)));
    assert.equal(ledger.code, 'CONSOLE_TRANSACTIONS_LIST');
    const publicLedger = assertOk(await pub(ctx, t, '/v1/transactions')).data;
    assert.deepEqual(ledger.data, publicLedger);
    const usage = ledger.data.items.filter((e: { type: string }) => e.type === 'usage');
    assert.equal(usage.length, 4);
    assert.deepEqual(usage.map((e: { operationId: string }) => e.operationId), ['chat.generate', 'music.generate', 'chat.generate', 'chat.generate']);
    assert.deepEqual(usage.map((e: { keyId: string }) => e.keyId), [t.key.id, t.second.key.id, t.key.id, t.key.id]);
    const times = ledger.data.items.map((e: { createdAt: string }) => Date.parse(e.createdAt));
    assert.deepEqual(times, [...times].sort((a: number, b: number) => b - a), 'newest first');

    // Paging: the console's cursor walks the same ledger as the public one, page by page.
    const first = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/transactions?limit=2`))).data;
    assert.deepEqual(first.items, publicLedger.items.slice(0, 2));
    const next = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/transactions?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`))).data;
    assert.deepEqual(next.items, publicLedger.items.slice(2, 4));
    const allocPage = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/balance?limit=1`))).data;
    assert.equal(allocPage.allocations.length, 1);
    assert.ok(allocPage.nextCursor);

    for (const query of ['bucket=day&groupBy=operationId&from=2026-11-01&to=2026-12-01', 'bucket=hour', 'bucket=month&groupBy=keyId&groupBy=executionOrigin', '']) {
      const mine = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/costs?${query}`)));
      assert.equal(mine.code, 'CONSOLE_COSTS_GET');
      assert.deepEqual(mine.data, assertOk(await pub(ctx, t, `/v1/costs?${query}`)).data, query);
    }
    const month = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/costs?bucket=day&groupBy=operationId&from=2026-11-01&to=2026-12-01`))).data;
    assert.equal(month.buckets.length, 30);
    assert.equal(month.totals.byType.usage, -usage.reduce((sum: number, e: { amountMillicents: number }) => sum + e.amountMillicents, 0));
    assert.deepEqual(month.totals.lines.map((l: { type: string; operationId: string }) => [l.type, l.operationId]), [['usage', 'chat.generate'], ['usage', 'music.generate'], ['expiration', null]].filter(([type]) => month.totals.byType[type as string] !== 0));

    for (const query of ['bucket=minute', 'bucket=day&from=2026-11-01&to=2026-12-01&groupBy=operation', 'bucket=hour&groupBy=keyId&groupBy=operation', '']) {
      // The public read charges its own point first, and reports it: the console's read after it charges none.
      const theirs = assertOk(await pub(ctx, t, `/v1/usage/history?${query}`)).data;
      const mine = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage/history?${query}`)));
      assert.equal(mine.code, 'CONSOLE_USAGE_HISTORY_GET');
      assert.deepEqual(mine.data, theirs, query);
    }
    const minutes = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage/history?bucket=minute`))).data;
    assert.equal(minutes.buckets.length, 60);
    assert.ok(minutes.totals.points > 0);
  });

  test('points and every budget against its ceiling equal GET /v1/usage; the console\'s reads charge no points', async () => {
    const ctx = get();
    const t = await spendingTenant(ctx);
    const login = await signInAs(ctx, t.user.id);
    const theirs = assertOk(await pub(ctx, t, '/v1/usage')).data;
    const res = await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage`));
    const mine = assertOk(res);
    assert.equal(mine.code, 'CONSOLE_USAGE_GET');
    assert.equal(mine.data.now, new Date(ctx.clock.now()).toISOString());
    assert.deepEqual(mine.data.points, theirs.points);
    assert.equal(mine.data.plan, theirs.plan);
    assert.deepEqual(mine.data.workspaceBudgets, theirs.budgets.filter((b: { scope: string }) => b.scope === 'workspace'));
    assert.equal(mine.data.canSeeKeys, true);
    assert.deepEqual(mine.data.keyBudgets, [{ keyId: t.key.id, prefix: t.key.prefix, budgets: theirs.budgets.filter((b: { scope: string }) => b.scope === 'key') }]);
    assert.deepEqual(mine.data.workspaceBudgets.map((b: { period: string }) => b.period), ['week']);
    const spentByKey = assertOk(await pub(ctx, t, '/v1/transactions')).data.items.filter((e: { keyId: string }) => e.keyId === t.key.id).map((e: { amountMillicents: number }) => -e.amountMillicents);
    assert.equal(spentByKey.length, 3);
    // The day's spending is the last run's (the clock moved a day after the first two); the month's all three.
    assert.deepEqual(mine.data.keyBudgets[0].budgets.map((b: { period: string; spentMillicents: number }) => [b.period, b.spentMillicents]), [['day', spentByKey[0]], ['month', spentByKey[0] + spentByKey[1] + spentByKey[2]]]);

    // Every read of the page, many times over: the workspace's points do not move.
    const before = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage`))).data;
    for (let i = 0; i < 3; i++) for (const url of READS(t.workspace.id)) assertOk(await consoleCall(ctx, login, 'GET', url));
    const again = assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage`))).data;
    assert.deepEqual(again.points, before.points);

    // A revoked key's budgets are not listed.
    const revoked = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test', budgets: { dailyMillicents: 9_000 } });
    assert.equal(assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage`))).data.keyBudgets.length, 2);
    assertOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys/${revoked.key.id}/revoke`));
    assert.deepEqual(assertOk(await consoleCall(ctx, login, 'GET', tm(`${base(t.workspace.id)}/usage`))).data.keyBudgets.map((k: { keyId: string }) => k.keyId), [t.key.id]);
  });

  test('a member reads everything but the keys\' budgets; an admin sees them', async () => {
    const ctx = get();
    const owner = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Owner' });
    const member = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Member' });
    const adminUser = await accounts.createUser(ctx.deps, { email: uniqueEmail(), name: 'Admin' });
    const org = await accounts.createOrganization(ctx.deps, { name: 'Acme', ownerUserId: owner.id });
    await accounts.setMember(ctx.deps, org.id, { userId: member.id, role: 'member' });
    await accounts.setMember(ctx.deps, org.id, { userId: adminUser.id, role: 'admin' });
    const workspace = await accounts.createWorkspace(ctx.deps, { name: 'Acme prod', plan: 'pro', organizationId: org.id });
    const key = await seedKey(ctx.deps, owner.id, [workspace.id], { mode: 'test', budgets: { dailyMillicents: 5_000 } });
    await grantCredits(ctx.deps, workspace.id, { amountMillicents: 100_000, mode: 'test' });
    const t = { secret: key.secret, workspace };
    assert.equal((await run(ctx, t, 'chat.generate', chatCosting(400))).statusCode, 200);

    const memberLogin = await signInAs(ctx, member.id);
    for (const url of READS(workspace.id)) assertOk(await consoleCall(ctx, memberLogin, 'GET', url));
    const seen = assertOk(await consoleCall(ctx, memberLogin, 'GET', tm(`${base(workspace.id)}/usage`))).data;
    assert.equal(seen.canSeeKeys, false);
    assert.deepEqual(seen.keyBudgets, []);
    assert.equal(JSON.stringify(seen).includes(key.key.id), false);
    assert.deepEqual(assertOk(await consoleCall(ctx, memberLogin, 'GET', tm(`${base(workspace.id)}/transactions`))).data, assertOk(await pub(ctx, t, '/v1/transactions')).data);

    const adminLogin = await signInAs(ctx, adminUser.id);
    const admins = assertOk(await consoleCall(ctx, adminLogin, 'GET', tm(`${base(workspace.id)}/usage`))).data;
    assert.equal(admins.canSeeKeys, true);
    const spent = -assertOk(await pub(ctx, t, '/v1/transactions')).data.items.find((e: { type: string }) => e.type === 'usage').amountMillicents;
    assert.ok(spent > 0);
    assert.deepEqual(admins.keyBudgets.map((k: { keyId: string; budgets: { spentMillicents: number }[] }) => [k.keyId, k.budgets[0]!.spentMillicents]), [[key.key.id, spent]]);
  });

  test('another user\'s workspace and an unknown one are 404 on every endpoint; no session 401; an API key is refused; bad queries 400', async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps, { mode: 'test', credits: 10_000 });
    const other = await spendingTenant(ctx);
    const login: ConsoleLogin = await signInAs(ctx, mine.user.id);
    const unknown = '00000000-0000-4000-8000-0000000000aa';
    for (const url of [...READS(other.workspace.id), ...READS(unknown)]) {
      const res = await consoleCall(ctx, login, 'GET', url);
      assertError(res, 404, 'NOT_FOUND');
      for (const secretThing of [other.key.id, other.second.key.id, String(other.workspace.name === 'x')]) if (secretThing.length > 10) assert.equal(res.body.includes(secretThing), false);
    }
    for (const url of READS(mine.workspace.id)) {
      assertError(await consoleCall(ctx, undefined, 'GET', url), 401, 'UNAUTHENTICATED');
      assertError(await consoleCall(ctx, login, 'GET', url, { headers: { authorization: `Bearer ${mine.secret}` } }), 401, 'UNAUTHENTICATED');
      assertError(await call(ctx, 'GET', url, { secret: mine.secret, workspaceId: mine.workspace.id }), 401, 'UNAUTHENTICATED');
    }
    assertError(await consoleCall(ctx, login, 'GET', tm(`${base('not-a-uuid')}/balance`)), 400, 'INVALID_REQUEST');
    for (const bad of [
      'costs?bucket=week',
      'costs?from=2026-13-01',
      'costs?format=csv',
      'costs?from=2026-11-02&to=2026-11-01',
      'costs?groupBy=jobId',
      'usage/history?bucket=month',
      'usage/history?bucket=minute&from=2026-01-01',
      'transactions?limit=0',
      'transactions?limit=101',
      'transactions?cursor=',
      'transactions?cursor=nonsense',
      'balance?other=1',
      'notifications?limit=1000',
    ]) {
      assertError(await consoleCall(ctx, login, 'GET', bad.startsWith('notifications') ? `${base(mine.workspace.id)}/${bad}` : tm(`${base(mine.workspace.id)}/${bad}`)), 400, bad.includes('cursor=nonsense') ? 'INVALID_CURSOR' : 'INVALID_REQUEST');
    }
    // The public API refuses the same costs and history queries with the same answer.
    for (const bad of ['costs?bucket=week', 'costs?from=2026-11-02&to=2026-11-01', 'usage/history?bucket=minute&from=2026-01-01']) {
      const a = assertError(await consoleCall(ctx, login, 'GET', tm(`${base(mine.workspace.id)}/${bad}`)), 400, 'INVALID_REQUEST');
      const b = assertError(await pub(ctx, mine, `/v1/${bad}`), 400, 'INVALID_REQUEST');
      assert.equal(a.message, b.message, bad);
      assert.deepEqual(a.details, b.details, bad);
    }
    // A cursor of another workspace's ledger is refused, not followed.
    const theirs = assertOk(await pub(ctx, other, '/v1/transactions?limit=1')).data;
    assertError(await consoleCall(ctx, login, 'GET', tm(`${base(mine.workspace.id)}/transactions?cursor=${encodeURIComponent(theirs.nextCursor)}`)), 400, 'INVALID_CURSOR');
  });
}, testKeySuite());

describeEachDatabase('console usage: live alerts (live providers\' fakes, live-only)', (get) => {
  test('alerts and account notifications: the workspace\'s list equals the admin API\'s, newest first', async () => {
    const ctx = get();
    const t = await spendingTenant(ctx, 'live');
    const login = await signInAs(ctx, t.user.id);
    const mine = assertOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/notifications`));
    assert.equal(mine.code, 'CONSOLE_NOTIFICATIONS_LIST');
    const theirs = assertOk(await call(ctx, 'GET', `/admin/v1/workspaces/${t.workspace.id}/notifications`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } })).data;
    assert.deepEqual(mine.data, theirs);
    const kinds = mine.data.items.map((n: { kind: string }) => n.kind);
    assert.ok(kinds.includes('credits.low'), JSON.stringify(kinds));
    assert.ok(kinds.includes('allocation.expiring'), JSON.stringify(kinds));
    const paged = assertOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/notifications?limit=1`)).data;
    assert.deepEqual(paged.items, theirs.items.slice(0, 1));
  });
}, { live: true });
