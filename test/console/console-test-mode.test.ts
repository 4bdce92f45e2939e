/**
 * Test mode in the owners' console (issue 34; decisions.md "Test mode"): test keys created from
 * the console, the workspace's test balance and ledger read with `mode=test`, and "Add test
 * credits" (POST …/test-credits), which adds to the test balance only: the live balance and
 * ledger stay exactly as they were, as the public API shows them to a live key, and the test
 * balance grows by the amount, as it shows them to a test key. Owners and admins add test
 * credits; a member gets the refusal of every other console change; bad amounts are 400 naming
 * the field; a test twin's id is no workspace of the console (404). A test key estimates from
 * the console as the API does for it (runs and jobs in test mode: console-jobs-test-mode.test.ts).
 * Ledger invariants hold in both modes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { grantCredits } from '../../src/modules/billing/service.js';
import { testScopeOf } from '../../src/lib/livemode.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, expectOk } from '../support/assertions.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant } from '../support/seed.js';
import { consoleCall, seedSignedInOrganization, signInAs, SMALL_KEY_BODY, type ConsoleLogin } from '../support/console.js';

const base = (workspaceId: string) => `/console/api/workspaces/${workspaceId}`;

/** What the public API shows a key of the workspace: its mode's balance (first page) and ledger (first page). */
async function moneyOf(ctx: TestContext, secret: string, workspaceId: string) {
  const balance = await call(ctx, 'GET', '/v1/balance?limit=100', { secret, workspaceId });
  const ledger = await call(ctx, 'GET', '/v1/transactions?limit=100', { secret, workspaceId });
  assert.equal(balance.statusCode, 200, balance.body);
  assert.equal(ledger.statusCode, 200, ledger.body);
  return { balance: balance.json().data, ledger: ledger.json().data };
}

async function addTestCredits(ctx: TestContext, login: ConsoleLogin, workspaceId: string, body: unknown) {
  return consoleCall(ctx, login, 'POST', `${base(workspaceId)}/test-credits`, { body });
}

describeEachDatabase('console test mode', (get) => {
  test('a test key created in the console: wask_test_ secret, mode test in the list, the test balance on the public API', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 50_000 });
    const login = await signInAs(ctx, t.user.id);
    const created = expectOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys`, { body: { ...SMALL_KEY_BODY, scopes: ['workspaces:read', 'billing:read'], mode: 'test' } }), 'CONSOLE_KEYS_CREATE');
    assert.match(created.secret, /^wask_test_[A-Za-z0-9_-]{43}$/);
    assert.equal(created.key.mode, 'test');
    assert.equal(created.key.prefix, created.secret.slice(0, 'wask_test_'.length + 7));
    const live = expectOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys`, { body: SMALL_KEY_BODY }), 'CONSOLE_KEYS_CREATE');
    assert.match(live.secret, /^wask_[A-Za-z0-9_-]{43}$/, 'live is the default');
    assert.equal(live.key.mode, 'live');
    const explicit = expectOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys`, { body: { ...SMALL_KEY_BODY, mode: 'live' } }), 'CONSOLE_KEYS_CREATE');
    assert.equal(explicit.key.mode, 'live');

    const list = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/keys`), 'CONSOLE_KEYS_LIST');
    const modes = Object.fromEntries(list.items.map((k: { id: string; mode: string }) => [k.id, k.mode]));
    assert.deepEqual(modes, { [created.key.id]: 'test', [live.key.id]: 'live', [explicit.key.id]: 'live', [t.key.id]: 'live' });

    // The test key reads the test balance: the first test grant, nothing of the live credits.
    const testMoney = await moneyOf(ctx, created.secret, t.workspace.id);
    assert.equal(testMoney.balance.livemode, false);
    assert.equal(testMoney.balance.workspaceId, t.workspace.id);
    assert.equal(testMoney.balance.totalMillicents, ctx.config.testCreditsMillicents);
    assert.deepEqual(testMoney.balance.allocations.map((a: { provenance: string }) => a.provenance), ctx.config.testCreditsMillicents > 0 ? ['test_grant'] : []);
    assert.equal((await moneyOf(ctx, t.secret, t.workspace.id)).balance.totalMillicents, 50_000, 'the live key still sees the live credits');

    // The console's reads of both modes equal the public API's.
    const consoleTest = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET');
    assert.deepEqual(consoleTest, testMoney.balance);
    const consoleTestLedger = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/transactions?limit=100&mode=test`), 'CONSOLE_TRANSACTIONS_LIST');
    assert.deepEqual(consoleTestLedger, testMoney.ledger);

    // Rolling keeps the mode; a mode that does not exist is 400 naming the field.
    const rolled = expectOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys/${created.key.id}/roll`, { body: { overlapSeconds: 0 } }), 'CONSOLE_KEYS_ROLL');
    assert.match(rolled.secret, /^wask_test_/);
    assert.equal(rolled.key.mode, 'test');
    const bad = assertError(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys`, { body: { ...SMALL_KEY_BODY, mode: 'sandbox' } }), 400, 'INVALID_REQUEST');
    assert.match(JSON.stringify(bad), /mode/);
    const changeMode = await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/keys/${live.key.id}/update`, { body: { mode: 'test' } });
    assertError(changeMode, 400, 'INVALID_REQUEST');
    assert.equal(expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/keys`), 'CONSOLE_KEYS_LIST').items.find((k: { id: string }) => k.id === live.key.id).mode, 'live', 'a key keeps its mode');
    // The console estimates and runs with a test key as the API does for it (test mode, console-jobs-test-mode.test.ts);
    // naming the live mode with a test key is refused before anything is admitted.
    const chat = { operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'hi' }] } };
    const runner = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const withTestKey = expectOk(await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/estimates`, { body: { keyId: runner.key.id, mode: 'test', ...chat } }), 'CONSOLE_ESTIMATE');
    const apiEstimate = await call(ctx, 'POST', '/v1/estimates', { secret: runner.secret, workspaceId: t.workspace.id, body: chat });
    assert.deepEqual(withTestKey, apiEstimate.json().data);
    const inLiveMode = await consoleCall(ctx, login, 'POST', `${base(t.workspace.id)}/estimates`, { body: { keyId: runner.key.id, mode: 'live', ...chat } });
    assert.match(assertError(inLiveMode, 400, 'INVALID_REQUEST').message, /test mode/);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
  });

  test('"Add test credits" adds to the test balance only; the live balance and ledger are untouched', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 75_000 });
    const login = await signInAs(ctx, t.user.id);
    const testKey = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const liveBefore = await moneyOf(ctx, t.secret, t.workspace.id);
    const testBefore = await moneyOf(ctx, testKey.secret, t.workspace.id);
    const consoleLiveBefore = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100`), 'CONSOLE_BALANCE_GET');
    assert.deepEqual(consoleLiveBefore, liveBefore.balance);

    const amount = 2_500_000;
    const granted = expectOk(await addTestCredits(ctx, login, t.workspace.id, { amountMillicents: amount }), 'CONSOLE_TEST_CREDITS_GRANT');
    assert.equal(granted.allocation.livemode, false);
    assert.equal(granted.allocation.workspaceId, t.workspace.id, 'the public workspace id, never the twin');
    assert.equal(granted.allocation.amountMillicents, amount);
    assert.equal(granted.allocation.provenance, 'owner_test_grant');
    assert.equal(granted.allocation.expiresAt, null);
    assert.equal(granted.balance.livemode, false);
    assert.equal(granted.balance.totalMillicents, testBefore.balance.totalMillicents + amount);

    // Live: exactly as before, through the live key and the console's live reads.
    assert.deepEqual(await moneyOf(ctx, t.secret, t.workspace.id), liveBefore);
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100`), 'CONSOLE_BALANCE_GET'), liveBefore.balance);
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/transactions?limit=100&mode=live`), 'CONSOLE_TRANSACTIONS_LIST'), liveBefore.ledger);

    // Test: one more allocation and one more purchase entry of the amount, seen by the test key.
    const testAfter = await moneyOf(ctx, testKey.secret, t.workspace.id);
    assert.equal(testAfter.balance.totalMillicents, testBefore.balance.totalMillicents + amount);
    assert.equal(testAfter.balance.spendableMillicents, testBefore.balance.spendableMillicents + amount);
    const newAllocation = testAfter.balance.allocations.find((a: { id: string }) => a.id === granted.allocation.id);
    assert.deepEqual(
      { remaining: newAllocation.remainingMillicents, provenance: newAllocation.provenance, livemode: newAllocation.livemode },
      { remaining: amount, provenance: 'owner_test_grant', livemode: false },
    );
    assert.equal(testAfter.ledger.items.length, testBefore.ledger.items.length + 1);
    const [entry] = testAfter.ledger.items;
    assert.deepEqual({ type: entry.type, amount: entry.amountMillicents, livemode: entry.livemode, jobId: entry.jobId }, { type: 'purchase', amount, livemode: false, jobId: null });
    assert.deepEqual(testAfter.ledger.items.slice(1), testBefore.ledger.items);
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET'), testAfter.balance);
    assert.deepEqual(granted.balance, expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET'));

    // The bound itself is accepted.
    expectOk(await addTestCredits(ctx, login, t.workspace.id, { amountMillicents: 100_000_000 }), 'CONSOLE_TEST_CREDITS_GRANT');
    assert.equal((await moneyOf(ctx, testKey.secret, t.workspace.id)).balance.totalMillicents, testBefore.balance.totalMillicents + amount + 100_000_000);
    assert.deepEqual(await moneyOf(ctx, t.secret, t.workspace.id), liveBefore);

    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
  });

  test('test credits for a workspace without test mode yet: its first test balance comes with them', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 10_000 });
    const login = await signInAs(ctx, t.user.id);
    const emptyTest = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET');
    assert.deepEqual(
      { total: emptyTest.totalMillicents, allocations: emptyTest.allocations, livemode: emptyTest.livemode, workspaceId: emptyTest.workspaceId },
      { total: 0, allocations: [], livemode: false, workspaceId: t.workspace.id },
    );
    const granted = expectOk(await addTestCredits(ctx, login, t.workspace.id, { amountMillicents: 1 }), 'CONSOLE_TEST_CREDITS_GRANT');
    assert.equal(granted.balance.totalMillicents, ctx.config.testCreditsMillicents + 1);
    const testKey = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const seen = await moneyOf(ctx, testKey.secret, t.workspace.id);
    assert.equal(seen.balance.totalMillicents, ctx.config.testCreditsMillicents + 1, 'the test key made no second first grant');
    assert.equal((await moneyOf(ctx, t.secret, t.workspace.id)).balance.totalMillicents, 10_000);
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
  });

  test('bad amounts are 400 naming the field; live credits can never be added from the console', async () => {
    const ctx = get();
    const t = await seedTenant(ctx.deps, { credits: 20_000 });
    const login = await signInAs(ctx, t.user.id);
    await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5_000, mode: 'test' });
    const liveBefore = await moneyOf(ctx, t.secret, t.workspace.id);
    const testBefore = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET');
    const bad: [unknown, string][] = [
      [{ amountMillicents: 0 }, '/amountMillicents'],
      [{ amountMillicents: -5 }, '/amountMillicents'],
      [{ amountMillicents: 100_000_001 }, '/amountMillicents'],
      [{ amountMillicents: 1.5 }, '/amountMillicents'],
      [{ amountMillicents: '100' }, '/amountMillicents'],
      [{ amountMillicents: null }, '/amountMillicents'],
      [{ amountMillicents: Number.MAX_SAFE_INTEGER }, '/amountMillicents'],
      [{}, 'amountMillicents'],
    ];
    for (const [body, field] of bad) {
      const res = await addTestCredits(ctx, login, t.workspace.id, body);
      const refused = assertError(res, 400, 'INVALID_REQUEST');
      if (field.startsWith('/')) assert.ok(refused.details?.errors?.some((e: { pointer: string }) => e.pointer === field), `${JSON.stringify(body)}: pointer ${field}: ${res.body}`);
      else assert.match(refused.message, new RegExp(field), `${JSON.stringify(body)} names ${field}: ${res.body}`);
    }
    // Nothing but the amount: no mode (live credits are the operator's), provenance or expiry.
    for (const extra of [{ mode: 'live' }, { mode: 'test' }, { provenance: 'purchase' }, { expiresAt: null }]) {
      const res = await addTestCredits(ctx, login, t.workspace.id, { amountMillicents: 1_000, ...extra });
      const refused = assertError(res, 400, 'INVALID_REQUEST');
      assert.match(refused.message, /additional properties/, res.body);
    }
    for (const raw of ['amountMillicents=1000', '[1000]', '1000']) {
      const res = await ctx.app.inject({ method: 'POST', url: `${base(t.workspace.id)}/test-credits`, payload: raw, headers: { cookie: login.cookie, origin: new URL(ctx.config.publicBaseUrl).origin, 'x-csrf-token': login.csrfToken, 'content-type': raw.startsWith('amount') ? 'application/x-www-form-urlencoded' : 'application/json' } });
      assert.ok([400, 415].includes(res.statusCode), `${raw}: ${res.statusCode} ${res.body}`);
    }
    // A mode query on the reads takes live or test only.
    assertError(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?mode=sandbox`), 400, 'INVALID_REQUEST');
    assertError(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/transactions?mode=`), 400, 'INVALID_REQUEST');
    // A cursor of the live list is not one of the test list.
    const livePage = expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/transactions?limit=1`), 'CONSOLE_TRANSACTIONS_LIST');
    assert.ok(livePage.nextCursor === null || (await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/transactions?mode=test&cursor=${encodeURIComponent(livePage.nextCursor)}`)).statusCode === 400);

    assert.deepEqual(await moneyOf(ctx, t.secret, t.workspace.id), liveBefore, 'no live credit moved');
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base(t.workspace.id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET'), testBefore, 'no test credit either');
    await assertLedgerInvariants(ctx.deps, t.workspace.id);
    await assertLedgerInvariants(ctx.deps, testScopeOf(t.workspace.id));
  });

  test('owners and admins add test credits; a member reads the test balance but is refused like any other change', async () => {
    const ctx = get();
    const o = await seedSignedInOrganization(ctx);
    const id = o.workspace.id;
    expectOk(await addTestCredits(ctx, o.owner, id, { amountMillicents: 1_000 }), 'CONSOLE_TEST_CREDITS_GRANT');
    expectOk(await addTestCredits(ctx, o.admin, id, { amountMillicents: 2_000 }), 'CONSOLE_TEST_CREDITS_GRANT');
    const before = expectOk(await consoleCall(ctx, o.member, 'GET', `${base(id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET');
    assert.equal(before.totalMillicents, ctx.config.testCreditsMillicents + 3_000);
    const ledgerBefore = expectOk(await consoleCall(ctx, o.member, 'GET', `${base(id)}/transactions?limit=100&mode=test`), 'CONSOLE_TRANSACTIONS_LIST');

    // The refusal of a member's other changes (a key, a webhook): 403 FORBIDDEN.
    const refused = assertError(await addTestCredits(ctx, o.member, id, { amountMillicents: 1_000 }), 403, 'FORBIDDEN');
    assert.match(refused.message, /owners and admins/);
    assertError(await consoleCall(ctx, o.member, 'POST', `${base(id)}/keys`, { body: SMALL_KEY_BODY }), 403, 'FORBIDDEN');
    assertError(await consoleCall(ctx, o.member, 'POST', `${base(id)}/domains`, { body: { hostname: 'example.com' } }), 403, 'FORBIDDEN');
    assert.deepEqual(expectOk(await consoleCall(ctx, o.member, 'GET', `${base(id)}/balance?limit=100&mode=test`), 'CONSOLE_BALANCE_GET'), before);
    assert.deepEqual(expectOk(await consoleCall(ctx, o.member, 'GET', `${base(id)}/transactions?limit=100&mode=test`), 'CONSOLE_TRANSACTIONS_LIST'), ledgerBefore);
    const live = expectOk(await consoleCall(ctx, o.member, 'GET', `${base(id)}/balance`), 'CONSOLE_BALANCE_GET');
    assert.deepEqual({ total: live.totalMillicents, livemode: live.livemode }, { total: 0, livemode: true }, 'no live credit from any of them');
    await assertLedgerInvariants(ctx.deps, id);
    await assertLedgerInvariants(ctx.deps, testScopeOf(id));
  });

  test("another user's workspace, an unknown one and a test twin's id are 404; Origin and CSRF token are required", async () => {
    const ctx = get();
    const mine = await seedTenant(ctx.deps);
    const theirs = await seedTenant(ctx.deps, { credits: 1_000 });
    const login = await signInAs(ctx, mine.user.id);
    const other = await signInAs(ctx, (await seedTenant(ctx.deps)).user.id);
    // Both twins exist: each workspace has a test key.
    await seedKey(ctx.deps, mine.user.id, [mine.workspace.id], { mode: 'test' });
    await seedKey(ctx.deps, theirs.user.id, [theirs.workspace.id], { mode: 'test' });
    const theirTest = expectOk(await consoleCall(ctx, await signInAs(ctx, theirs.user.id), 'GET', `${base(theirs.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET');
    const missing = '0190a000-0000-7000-8000-000000000000';
    for (const workspaceId of [theirs.workspace.id, missing, testScopeOf(mine.workspace.id), testScopeOf(theirs.workspace.id)]) {
      assertError(await addTestCredits(ctx, login, workspaceId, { amountMillicents: 1_000 }), 404, 'NOT_FOUND');
      for (const read of ['balance?mode=test', 'balance', 'transactions?mode=test', 'keys']) {
        assertError(await consoleCall(ctx, login, 'GET', `${base(workspaceId)}/${read}`), 404, 'NOT_FOUND');
      }
      assertError(await consoleCall(ctx, login, 'POST', `${base(workspaceId)}/keys`, { body: { ...SMALL_KEY_BODY, mode: 'test' } }), 404, 'NOT_FOUND');
    }
    const me = expectOk(await consoleCall(ctx, login, 'GET', '/console/api/me'), 'CONSOLE_ME');
    assert.deepEqual(me.workspaces.map((w: { id: string }) => w.id), [mine.workspace.id], 'the twin is no workspace of the console');

    const url = `${base(mine.workspace.id)}/test-credits`;
    for (const origin of [null, 'https://evil.example', 'null'] as const) {
      assertError(await consoleCall(ctx, login, 'POST', url, { body: { amountMillicents: 1_000 }, origin }), 403, 'FORBIDDEN_ORIGIN');
    }
    for (const csrfToken of [null, 'x'.repeat(64), other.csrfToken]) {
      assertError(await consoleCall(ctx, login, 'POST', url, { body: { amountMillicents: 1_000 }, csrfToken }), 403, 'FORBIDDEN');
    }
    assertError(await consoleCall(ctx, undefined, 'POST', url, { body: { amountMillicents: 1_000 } }), 401, 'UNAUTHENTICATED');
    assertError(await consoleCall(ctx, login, 'POST', url, { body: { amountMillicents: 1_000 }, headers: { authorization: `Bearer ${mine.secret}` } }), 401, 'UNAUTHENTICATED');
    const mineTest = expectOk(await consoleCall(ctx, login, 'GET', `${base(mine.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET');
    assert.equal(mineTest.totalMillicents, ctx.config.testCreditsMillicents, 'no refused call added anything');
    assert.deepEqual(expectOk(await consoleCall(ctx, await signInAs(ctx, theirs.user.id), 'GET', `${base(theirs.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET'), theirTest);
    for (const w of [mine, theirs]) {
      await assertLedgerInvariants(ctx.deps, w.workspace.id);
      await assertLedgerInvariants(ctx.deps, testScopeOf(w.workspace.id));
    }
  });
}, testKeySuite());
