/**
 * The console's test-mode switch on its run and job endpoints (issue 34; decisions.md "Test
 * mode"), with SIMULATE_LIVE off (testKeySuite): a run from the console with a test key is the
 * public API's run with that key (simulated, paid from the test balance, a test job with
 * `livemode: false`); the job endpoints take `mode` (live by default) and answer for that mode
 * only, through the same services and scopes as the public API's job reads: the list holds one
 * mode, a job of the other mode is 404 on every job endpoint (snapshot, output, cancel, retry),
 * a cursor of one mode is refused in the other; a key of the wrong mode is refused before
 * anything is admitted (`mode` on the run endpoints, the retry's key). Cancel and retry in test
 * mode move test money only: the live balance and ledger stay exactly as they were, and the
 * ledger invariants hold in both modes.
 *
 * Live-only part: the last block ("live jobs in test mode") needs live jobs, which a live key
 * makes only with a real provider: it runs them on the paid providers' fakes (`{ live: true }`,
 * support/live-backend.ts) to show that a live job is 404 on every test-mode job endpoint and
 * absent from the test list. SIMULATE_LIVE is off throughout.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { testScopeOf } from '../../src/lib/livemode.js';
import { assertError, expectOk } from '../support/assertions.js';
import { call, describeEachDatabase, testKeySuite, type TestContext } from '../support/harness.js';
import { drain, getJob } from '../support/jobs.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { consoleCall, signInAs, type ConsoleLogin } from '../support/console.js';

const LIVE_CREDITS = 5_000_000;
const TEST_CREDITS = 10_000_000;
const ws = (workspaceId: string) => `/console/api/workspaces/${workspaceId}`;
const IMAGE = { prompt: 'a lighthouse at dusk [sim:delay=0]', width: 256, height: 256 };
const CHAT = { messages: [{ role: 'user', content: 'hello [sim:delay=0]' }] };

/** A workspace with live credits and a live key (seedTenant), plus a test key whose test balance starts at TEST_CREDITS. */
async function seedBothModes(ctx: TestContext) {
  const live = await seedTenant(ctx.deps, { credits: LIVE_CREDITS });
  const testKey = await seedKey(ctx.deps, live.user.id, [live.workspace.id], { mode: 'test' });
  const login = await signInAs(ctx, live.user.id);
  const test: Tenant = { user: live.user, workspace: live.workspace, key: testKey.key, secret: testKey.secret };
  return { live, test, login };
}

/** The live money as the public API shows it to a live key: balance and ledger, first pages. */
async function liveMoney(ctx: TestContext, t: Tenant) {
  const balance = await call(ctx, 'GET', '/v1/balance?limit=100', { secret: t.secret, workspaceId: t.workspace.id });
  const ledger = await call(ctx, 'GET', '/v1/transactions?limit=100', { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(balance.statusCode, 200, balance.body);
  assert.equal(ledger.statusCode, 200, ledger.body);
  assert.equal(balance.json().data.livemode, true);
  return { balance: balance.json().data, ledger: ledger.json().data };
}

function consoleRun(ctx: TestContext, login: ConsoleLogin, workspaceId: string, body: object, idempotencyKey = randomUUID()) {
  return consoleCall(ctx, login, 'POST', `${ws(workspaceId)}/runs`, { body, headers: { 'idempotency-key': idempotencyKey } });
}

async function testJob(ctx: TestContext, login: ConsoleLogin, t: Tenant, input: object = IMAGE): Promise<string> {
  const data = expectOk(await consoleRun(ctx, login, t.workspace.id, { keyId: t.key.id, operationId: 'image.generate', input, mode: 'test' }), 'CONSOLE_RUNS_CREATE');
  assert.equal(data.run.kind, 'job');
  return data.run.jobId as string;
}

async function invariantsBothModes(ctx: TestContext, workspaceId: string) {
  await assertLedgerInvariants(ctx.deps, workspaceId);
  await assertLedgerInvariants(ctx.deps, testScopeOf(workspaceId));
}

describeEachDatabase('console jobs in test mode', (get) => {
  test('a run with a test key from the console: simulated, paid from the test balance, a test job seen in test mode only', async () => {
    const ctx = get();
    const { live, test: t, login } = await seedBothModes(ctx);
    const before = await liveMoney(ctx, live);

    // The operations a test key may run: every one (simulated), as GET /v1/tools lists them for it.
    const tools = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/tools?keyId=${t.key.id}&mode=test`), 'CONSOLE_TOOLS_LIST');
    const ops = tools.items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations.map((o) => o.operationId));
    const apiOps = (await call(ctx, 'GET', '/v1/tools', { secret: t.secret, workspaceId: t.workspace.id })).json().data.items.flatMap((tool: { operations: { operationId: string }[] }) => tool.operations.map((o) => o.operationId));
    assert.deepEqual(ops, apiOps, 'the operations GET /v1/tools lists for the test key');
    assert.ok(ops.includes('chat.generate') && ops.includes('image.generate'));

    const est = expectOk(await consoleCall(ctx, login, 'POST', `${ws(t.workspace.id)}/estimates`, { body: { keyId: t.key.id, operationId: 'chat.generate', input: CHAT, mode: 'test' } }), 'CONSOLE_ESTIMATE');
    const apiEst = (await call(ctx, 'POST', '/v1/estimates', { secret: t.secret, workspaceId: t.workspace.id, body: { operationId: 'chat.generate', input: CHAT } })).json().data;
    assert.deepEqual(est, apiEst, 'the figures of POST /v1/estimates for the test key');

    const sync = expectOk(await consoleRun(ctx, login, t.workspace.id, { keyId: t.key.id, operationId: 'chat.generate', input: CHAT, mode: 'test' }), 'CONSOLE_RUNS_CREATE');
    assert.equal(sync.run.kind, 'result');
    assert.equal(sync.run.status, 'completed');
    assert.ok(sync.run.costMillicents > 0, 'the simulated run is charged (to the test balance)');
    const chatJob = sync.run.jobId as string;
    const queued = await testJob(ctx, login, t);
    await drain(ctx);

    // The public API shows them to the test key as test jobs with origin web; the live key sees none.
    const apiTest = await getJob(ctx, t, chatJob);
    assert.deepEqual({ livemode: apiTest.livemode, origin: apiTest.executionOrigin, workspaceId: apiTest.workspaceId }, { livemode: false, origin: 'web', workspaceId: t.workspace.id });
    assert.equal((await call(ctx, 'GET', '/v1/jobs', { secret: live.secret, workspaceId: live.workspace.id })).json().data.items.length, 0);

    // The console's test-mode list equals GET /v1/jobs for the test key; the live list is empty.
    const testList = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs?mode=test`), 'CONSOLE_JOBS_LIST');
    const apiList = (await call(ctx, 'GET', '/v1/jobs', { secret: t.secret, workspaceId: t.workspace.id })).json().data;
    assert.deepEqual(testList.items, apiList.items);
    assert.deepEqual(testList.items.map((j: { id: string }) => j.id), [queued, chatJob]);
    assert.ok(testList.items.every((j: { livemode: boolean }) => j.livemode === false));
    for (const q of ['', '?mode=live']) assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs${q}`), 'CONSOLE_JOBS_LIST').items, [], `live list ${q || '(default)'}`);
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs?mode=test&operationId=chat.generate&status=completed`), 'CONSOLE_JOBS_LIST').items.map((j: { id: string }) => j.id), [chatJob], 'filters within the mode');

    // Snapshot and complete output in test mode.
    const snap = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs/${queued}?mode=test`), 'CONSOLE_JOBS_GET');
    assert.deepEqual({ status: snap.status, livemode: snap.livemode }, { status: 'completed', livemode: false });
    const out = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs/${queued}/output?mode=test`), 'CONSOLE_JOBS_OUTPUT');
    assert.equal(out.jobId, queued);
    assert.equal(out.offsetBytes, 0);

    // Live money untouched; the test ledger holds the charges.
    assert.deepEqual(await liveMoney(ctx, live), before);
    const testLedger = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/transactions?mode=test&limit=100`), 'CONSOLE_TRANSACTIONS_LIST');
    assert.ok(testLedger.items.some((e: { jobId: string | null; livemode: boolean }) => e.jobId === chatJob && e.livemode === false), 'the charge is a test ledger entry');
    const testBalance = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/balance?mode=test`), 'CONSOLE_BALANCE_GET');
    assert.ok(testBalance.totalMillicents < TEST_CREDITS + ctx.config.testCreditsMillicents, 'the test balance paid');
    await invariantsBothModes(ctx, t.workspace.id);
  });

  test('cross-mode: a test job is 404 on every live job endpoint; cursors stay in their mode', async () => {
    const ctx = get();
    const { live, test: t, login } = await seedBothModes(ctx);
    const testPending = await testJob(ctx, login, t);
    const testFailed = await testJob(ctx, login, t, { ...IMAGE, prompt: 'fails [sim:delay=0][sim:fail=PROVIDER_ERROR]' });
    await drain(ctx);
    const testDone = await testJob(ctx, login, t);
    await drain(ctx);
    const pendingAgain = await testJob(ctx, login, t);
    assert.equal((await getJob(ctx, t, testFailed)).status, 'failed');
    assert.equal((await getJob(ctx, t, testDone)).status, 'completed');
    assert.equal((await getJob(ctx, t, testPending)).status, 'completed');

    const before = await liveMoney(ctx, live);
    const probes = (jobId: string, q: string, keyId: string): ['GET' | 'POST', string, object | undefined][] => [
      ['GET', `${ws(t.workspace.id)}/jobs/${jobId}${q}`, undefined],
      ['GET', `${ws(t.workspace.id)}/jobs/${jobId}/output${q}`, undefined],
      ['POST', `${ws(t.workspace.id)}/jobs/${jobId}/cancel${q}`, undefined],
      ['POST', `${ws(t.workspace.id)}/jobs/${jobId}/retry${q}`, { keyId }],
    ];
    // Test jobs read in live mode (the default and explicit): 404, with a live key for the retry.
    for (const jobId of [pendingAgain, testFailed, testDone]) {
      for (const q of ['', '?mode=live']) {
        for (const [method, url, body] of probes(jobId, q, live.key.id)) {
          const res = await consoleCall(ctx, login, method, url, { body, headers: { 'idempotency-key': randomUUID() } });
          assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
          assert.equal(res.json().code, 'NOT_FOUND');
        }
      }
    }
    assert.equal((await getJob(ctx, t, pendingAgain)).status, 'pending', 'not cancelled through live mode');
    assert.equal((await getJob(ctx, t, testFailed)).status, 'failed', 'not retried through live mode');

    // The public API's own rule: a live key's read of the test job is 404 too; an id that is no job answers the same in test mode.
    const apiLive = await call(ctx, 'GET', `/v1/jobs/${testDone}`, { secret: live.secret, workspaceId: live.workspace.id });
    assertError(apiLive, 404, 'NOT_FOUND');
    const missing = '0190a000-0000-7000-8000-000000000000';
    for (const [method, url, body] of probes(missing, '?mode=test', t.key.id)) {
      const res = await consoleCall(ctx, login, method, url, { body, headers: { 'idempotency-key': randomUUID() } });
      assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
    }

    // A cursor of the test list is refused on the live list (bound to its scope), and the reverse.
    const page1 = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs?mode=test&limit=1`), 'CONSOLE_JOBS_LIST');
    assert.ok(page1.nextCursor);
    assertError(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs?limit=1&cursor=${encodeURIComponent(page1.nextCursor)}`), 400, 'INVALID_CURSOR');
    const page2 = expectOk(await consoleCall(ctx, login, 'GET', `${ws(t.workspace.id)}/jobs?mode=test&limit=1&cursor=${encodeURIComponent(page1.nextCursor)}`), 'CONSOLE_JOBS_LIST');
    assert.equal(page2.items.length, 1);

    // A mode that does not exist is 400 naming the field, on every job endpoint.
    for (const url of [`${ws(t.workspace.id)}/jobs?mode=sandbox`, `${ws(t.workspace.id)}/jobs/${testDone}?mode=sandbox`, `${ws(t.workspace.id)}/jobs/${testDone}/output?mode=TEST`]) {
      assert.match(JSON.stringify(assertError(await consoleCall(ctx, login, 'GET', url), 400, 'INVALID_REQUEST')), /mode/);
    }
    assert.deepEqual(await liveMoney(ctx, live), before);
    await invariantsBothModes(ctx, t.workspace.id);
  });

  test('cancel and retry in test mode: the public API’s rules, test money only, never live money', async () => {
    const ctx = get();
    const { live, test: t, login } = await seedBothModes(ctx);
    const before = await liveMoney(ctx, live);
    const base = ws(t.workspace.id);
    const testBalance = async () => expectOk(await consoleCall(ctx, login, 'GET', `${base}/balance?mode=test&limit=100`), 'CONSOLE_BALANCE_GET');

    // Cancel a pending test job: its hold is released, nothing is charged.
    const startBalance = await testBalance();
    const pending = await testJob(ctx, login, t);
    const held = await testBalance();
    assert.ok(held.reservedMillicents > startBalance.reservedMillicents, 'the run holds test credits');
    const cancelled = expectOk(await consoleCall(ctx, login, 'POST', `${base}/jobs/${pending}/cancel?mode=test`), 'CONSOLE_JOBS_CANCEL');
    assert.deepEqual({ status: cancelled.status, livemode: cancelled.livemode, cost: cancelled.costMillicents }, { status: 'cancelled', livemode: false, cost: 0 });
    assert.equal(expectOk(await consoleCall(ctx, login, 'POST', `${base}/jobs/${pending}/cancel?mode=test`), 'CONSOLE_JOBS_CANCEL').status, 'cancelled', 'cancelling again returns it');
    const afterCancel = await testBalance();
    assert.equal(afterCancel.reservedMillicents, startBalance.reservedMillicents, 'the hold is released');
    assert.equal(afterCancel.totalMillicents, startBalance.totalMillicents, 'nothing charged');
    const done = await testJob(ctx, login, t);
    await drain(ctx);
    assertError(await consoleCall(ctx, login, 'POST', `${base}/jobs/${done}/cancel?mode=test`), 409, 'JOB_NOT_CANCELLABLE');

    // Retry a failed test job with a test key, once per Idempotency-Key; a live key is refused in test mode.
    const failing = await testJob(ctx, login, t, { ...IMAGE, prompt: 'fails [sim:delay=0][sim:fail=PROVIDER_ERROR]' });
    await drain(ctx);
    assert.equal((await getJob(ctx, t, failing)).status, 'failed');
    const retryUrl = `${base}/jobs/${failing}/retry?mode=test`;
    const withLive = assertError(await consoleCall(ctx, login, 'POST', retryUrl, { body: { keyId: live.key.id }, headers: { 'idempotency-key': randomUUID() } }), 400, 'INVALID_REQUEST');
    assert.deepEqual(withLive.details, { keyId: live.key.id, mode: 'test', keyMode: 'live' });
    assertError(await consoleCall(ctx, login, 'POST', `${base}/jobs/${failing}/retry`, { body: { keyId: t.key.id }, headers: { 'idempotency-key': randomUUID() } }), 400, 'INVALID_REQUEST');
    assertError(await consoleCall(ctx, login, 'POST', `${base}/jobs/${done}/retry?mode=test`, { body: { keyId: t.key.id }, headers: { 'idempotency-key': randomUUID() } }), 409, 'JOB_NOT_RETRYABLE');
    const idem = randomUUID();
    const retried = expectOk(await consoleCall(ctx, login, 'POST', retryUrl, { body: { keyId: t.key.id }, headers: { 'idempotency-key': idem } }), 'CONSOLE_JOBS_RETRY');
    assert.equal(retried.run.status, 'pending');
    assert.equal(retried.replayed, false);
    const replay = await consoleCall(ctx, login, 'POST', retryUrl, { body: { keyId: t.key.id }, headers: { 'idempotency-key': idem } });
    assert.equal(replay.json().data.replayed, true, 'the same Idempotency-Key replays');
    assert.equal(replay.headers['idempotent-replayed'], 'true');
    assert.equal((await getJob(ctx, t, failing)).status, 'pending');
    await drain(ctx);
    const rerun = await getJob(ctx, t, failing);
    assert.deepEqual({ status: rerun.status, errorCode: rerun.errorCode, livemode: rerun.livemode }, { status: 'failed', errorCode: 'PROVIDER_ERROR', livemode: false }, 'the retry ran again on the simulated provider (same input, same failure)');

    // Live money exactly as before; both ledgers keep their invariants.
    assert.deepEqual(await liveMoney(ctx, live), before);
    await invariantsBothModes(ctx, t.workspace.id);
  });

  test('a key of the other mode is refused on the run endpoints before anything is admitted; a live key in live mode gets what production gives', async () => {
    const ctx = get();
    const { live, test: t, login } = await seedBothModes(ctx);
    const before = await liveMoney(ctx, live);
    const base = ws(t.workspace.id);
    const body = (keyId: string, mode?: 'live' | 'test') => ({ keyId, operationId: 'image.generate', input: IMAGE, ...(mode ? { mode } : {}) });
    for (const [keyId, mode, keyMode] of [[live.key.id, 'test', 'live'], [t.key.id, 'live', 'test']] as const) {
      for (const [method, url, b] of [
        ['GET', `${base}/tools?keyId=${keyId}&mode=${mode}`, undefined],
        ['POST', `${base}/estimates`, body(keyId, mode)],
        ['POST', `${base}/runs`, body(keyId, mode)],
      ] as const) {
        const refused = assertError(await consoleCall(ctx, login, method, url, { body: b, headers: { 'idempotency-key': randomUUID() } }), 400, 'INVALID_REQUEST');
        assert.deepEqual(refused.details, { keyId, mode, keyMode }, `${method} ${url}`);
      }
    }
    // Without SIMULATE_LIVE, a live key has no simulated work: the console answers as POST /v1/runs does.
    const liveRun = await consoleRun(ctx, login, base.split('/').pop()!, body(live.key.id, 'live'));
    const apiRun = await call(ctx, 'POST', '/v1/runs', { secret: live.secret, workspaceId: live.workspace.id, body: { operationId: 'image.generate', input: IMAGE }, headers: { 'idempotency-key': randomUUID() } });
    assert.equal(liveRun.statusCode, apiRun.statusCode, liveRun.body);
    assert.equal(liveRun.json().code, apiRun.json().code);
    assertError(liveRun, 400, 'OPERATION_UNAVAILABLE');
    assert.equal((await ctx.deps.db.selectFrom('jobs').select('id').where('workspace_id', 'in', [t.workspace.id, testScopeOf(t.workspace.id)]).execute()).length, 0, 'no refused request made a job');
    assert.deepEqual(await liveMoney(ctx, live), before);
    await invariantsBothModes(ctx, t.workspace.id);
  });
}, testKeySuite());

describeEachDatabase('console jobs in test mode: live jobs (live providers\' fakes, live-only)', (get) => {
  test('a live job is 404 on every test-mode job endpoint and never in the test list; live money untouched by the refusals', async () => {
    const ctx = get();
    const { live, test: t, login } = await seedBothModes(ctx);
    const base = ws(live.workspace.id);
    const liveRun = (input: object) => consoleRun(ctx, login, live.workspace.id, { keyId: live.key.id, operationId: 'image.generate', input, mode: 'live' });
    const LIVE_IMAGE = { prompt: 'a lighthouse at dusk', width: 256, height: 256 };
    const livePending = expectOk(await liveRun(LIVE_IMAGE), 'CONSOLE_RUNS_CREATE').run.jobId as string;
    await drainAll(ctx);
    ctx.live!.failNext();
    const liveFailed = expectOk(await liveRun(LIVE_IMAGE), 'CONSOLE_RUNS_CREATE').run.jobId as string;
    await drainAll(ctx);
    const liveWaiting = expectOk(await liveRun(LIVE_IMAGE), 'CONSOLE_RUNS_CREATE').run.jobId as string;
    assert.equal((await getJob(ctx, live, livePending)).status, 'completed');
    assert.equal((await getJob(ctx, live, liveFailed)).status, 'failed');
    const testOne = await testJob(ctx, login, t);
    const before = await liveMoney(ctx, live);

    for (const jobId of [livePending, liveFailed, liveWaiting]) {
      for (const [method, url, body] of [
        ['GET', `${base}/jobs/${jobId}?mode=test`, undefined],
        ['GET', `${base}/jobs/${jobId}/output?mode=test`, undefined],
        ['POST', `${base}/jobs/${jobId}/cancel?mode=test`, undefined],
        ['POST', `${base}/jobs/${jobId}/retry?mode=test`, { keyId: t.key.id }],
      ] as const) {
        const res = await consoleCall(ctx, login, method, url, { body, headers: { 'idempotency-key': randomUUID() } });
        assert.equal(res.statusCode, 404, `${method} ${url}: ${res.body}`);
        assert.equal(res.json().code, 'NOT_FOUND');
      }
      // The public API: the test key's read of the live job is 404 as well.
      assertError(await call(ctx, 'GET', `/v1/jobs/${jobId}`, { secret: t.secret, workspaceId: t.workspace.id }), 404, 'NOT_FOUND');
    }
    assert.equal((await getJob(ctx, live, liveWaiting)).status, 'pending', 'not cancelled through test mode');
    assert.equal((await getJob(ctx, live, liveFailed)).status, 'failed', 'not retried through test mode');
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base}/jobs?mode=test`), 'CONSOLE_JOBS_LIST').items.map((j: { id: string }) => j.id), [testOne]);
    assert.deepEqual(expectOk(await consoleCall(ctx, login, 'GET', `${base}/jobs`), 'CONSOLE_JOBS_LIST').items.map((j: { id: string }) => j.id), [liveWaiting, liveFailed, livePending]);
    assert.deepEqual(await liveMoney(ctx, live), before);
    await invariantsBothModes(ctx, live.workspace.id);
  });
}, { live: true });

/** Drains until no job is left to run now (a live provider's job takes a poll or two). */
async function drainAll(ctx: TestContext): Promise<void> {
  for (let i = 0; i < 10 && (await drain(ctx)) > 0; i++) ctx.clock.advance(2_000);
}
