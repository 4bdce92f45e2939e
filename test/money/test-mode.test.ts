/**
 * Test mode (issue 34; docs/decisions.md "Test mode"): keys have a mode; a test key works in its
 * workspace's test twin, on the simulated provider, paid from the test balance; test objects carry
 * `livemode: false` and stay invisible to live keys, and the reverse; webhooks get only their
 * mode's events. Each test names the rule it checks; ledger invariants after every money move.
 */
import { waitUntil } from '../support/wait.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { DEFAULT_TEST_CREDITS_MILLICENTS } from '../../src/config.js';
import fc from 'fast-check';
import { isLiveScope, publicWorkspaceId, testScopeOf } from '../../src/lib/livemode.js';
import { isUuid, newId } from '../../src/lib/ids.js';
import { admin, call, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { drain, run } from '../support/jobs.js';
import { keyBody, seedKey, seedTenant, type Tenant } from '../support/seed.js';
import { png, upload } from '../support/media.js';
import { emit } from '../support/webhooks.js';
import { connectClient } from '../support/mcp-client.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { verifyHost } from '../support/webhook-hosts.js';
import { parseCsv } from '../support/costs-oracle.js';

type Caller = Pick<Tenant, 'secret' | 'workspace'>;

const get = (ctx: TestContext, t: Caller, url: string) => call(ctx, 'GET', url, { secret: t.secret, workspaceId: t.workspace.id });
const post = (ctx: TestContext, t: Caller, url: string, body?: unknown) =>
  call(ctx, 'POST', url, { secret: t.secret, workspaceId: t.workspace.id, ...(body === undefined ? {} : { body }), headers: { 'idempotency-key': randomUUID() } });

/** A tenant with live credits and, beside its live key, a test key of the same owner and workspace. */
async function tenantWithTestKey(ctx: TestContext, credits = 100_000): Promise<{ live: Tenant; test: Tenant }> {
  const live = await seedTenant(ctx.deps, { credits });
  const { key, secret } = await seedKey(ctx.deps, live.user.id, [live.workspace.id], { mode: 'test', transports: ['rest', 'mcp'] });
  return { live, test: { ...live, key, secret } };
}

/** The whole ledger of a workspace scope, oldest first, as the API cannot show across modes. */
async function ledgerRows(ctx: TestContext, scopeId: string) {
  return ctx.deps.db.selectFrom('credit_transactions').select(['id', 'type', 'amount_mc', 'job_id']).where('workspace_id', '=', scopeId).orderBy('id').execute();
}

async function assertBothLedgers(ctx: TestContext, liveWorkspaceId: string) {
  await assertLedgerInvariants(ctx.deps, liveWorkspaceId);
  await assertLedgerInvariants(ctx.deps, testScopeOf(liveWorkspaceId));
}

test('rule "the test twin": its id maps both ways without a lookup, is never a live id, and is no UUID a client can send', () => {
  fc.assert(
    fc.property(fc.uuid(), fc.boolean(), (raw, upper) => {
      fc.pre(isUuid(raw) && '89ab'.includes(raw[19]!));
      const live = upper ? raw.toUpperCase() : raw;
      const twin = testScopeOf(live);
      assert.ok(isLiveScope(live));
      assert.ok(!isLiveScope(twin));
      assert.equal(publicWorkspaceId(twin), live.slice(0, 19) + live[19]!.toLowerCase() + live.slice(20));
      assert.equal(publicWorkspaceId(live), live);
      assert.notEqual(twin.toLowerCase(), live.toLowerCase());
      assert.equal(isUuid(twin), false, 'a twin id is refused wherever a client names a workspace');
    }),
    { numRuns: 500 },
  );
  for (let i = 0; i < 100; i++) assert.equal(publicWorkspaceId(testScopeOf(newId())).length, 36);
});

describeEachDatabase('test mode', (getCtx) => {
  test('rule "keys have a mode": test secrets start wask_test_, live ones wask_; the mode is in the key metadata; a roll keeps it', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps);
    const testKey = await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { mode: 'test' }));
    const body = assertOk(testKey).data;
    assert.match(body.secret, /^wask_test_[A-Za-z0-9_-]{43}$/);
    assert.equal(body.key.mode, 'test');
    assert.equal(body.key.prefix, body.secret.slice(0, 'wask_test_'.length + 7));
    const liveKey = assertOk(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id]))).data;
    assert.match(liveKey.secret, /^wask_[A-Za-z0-9_-]{43}$/);
    assert.equal(liveKey.key.mode, 'live');
    const rolled = assertOk(await admin(ctx, `/admin/v1/keys/${body.key.id}/roll`, { overlapSeconds: 0 })).data;
    assert.match(rolled.secret, /^wask_test_[A-Za-z0-9_-]{43}$/, 'the rolled secret keeps the test prefix');
    assert.equal(rolled.key.mode, 'test');
    assertOk(await get(ctx, { secret: rolled.secret, workspace: t.workspace }, '/v1/balance'));
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(t.user.id, [t.workspace.id], { mode: 'sandbox' })), 400, 'INVALID_REQUEST');
  });

  test('rule "test keys simulate, for free": a test run is paid from the test balance (a generous first grant in the test ledger); live credits and ledger do not move', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const liveBefore = await ledgerRows(ctx, live.workspace.id);
    const liveBalanceBefore = assertOk(await get(ctx, live, '/v1/balance')).data;

    const testBalance = assertOk(await get(ctx, tk, '/v1/balance')).data;
    assert.equal(testBalance.livemode, false);
    assert.equal(testBalance.workspaceId, live.workspace.id, 'responses name the workspace the client knows');
    assert.equal(testBalance.totalMillicents, DEFAULT_TEST_CREDITS_MILLICENTS);
    const firstGrant = assertOk(await get(ctx, tk, '/v1/transactions')).data.items;
    assert.equal(firstGrant.length, 1);
    assert.deepEqual([firstGrant[0].type, firstGrant[0].amountMillicents, firstGrant[0].livemode], ['purchase', DEFAULT_TEST_CREDITS_MILLICENTS, false]);

    const chat = await run(ctx, tk, 'chat.generate', { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10 });
    assert.equal(chat.statusCode, 200, chat.body);
    assert.match(chat.json().data.result.message.content, /Simulated/);
    const preview = await run(ctx, tk, 'link.preview', { url: 'https://example.com/page' });
    assert.equal(preview.statusCode, 200, preview.body);
    assert.equal(preview.json().data.result.metadata.url, 'https://example.com/page', 'link.preview is simulated too: nothing is fetched');
    const image = await run(ctx, tk, 'image.generate', { prompt: 'a cat', width: 256, height: 256 });
    assert.equal(image.statusCode, 202, image.body);
    await drain(ctx);
    const job = assertOk(await get(ctx, tk, `/v1/jobs/${image.json().data.jobId}`)).data;
    assert.equal(job.status, 'completed');
    assert.equal(job.livemode, false);
    assert.equal(job.workspaceId, live.workspace.id);

    const spent = chat.json().data.costMillicents + preview.json().data.costMillicents + job.costMillicents;
    assert.ok(spent > 0, 'test work is charged, to the test balance');
    const after = assertOk(await get(ctx, tk, '/v1/balance')).data;
    assert.equal(after.totalMillicents, DEFAULT_TEST_CREDITS_MILLICENTS - spent);
    const testLedger = assertOk(await get(ctx, tk, '/v1/transactions')).data.items;
    assert.ok(testLedger.every((e: { livemode: boolean }) => e.livemode === false));
    assert.equal(testLedger.filter((e: { type: string }) => e.type === 'usage').length, 3);

    assert.deepEqual(await ledgerRows(ctx, live.workspace.id), liveBefore, 'the live ledger is untouched');
    assert.deepEqual(assertOk(await get(ctx, live, '/v1/balance')).data, liveBalanceBefore, 'the live balance is untouched');
    await assertBothLedgers(ctx, live.workspace.id);
  });

  test('rule "and the reverse": live work leaves the test balance and ledger untouched', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const testBefore = await ledgerRows(ctx, testScopeOf(live.workspace.id));
    const res = await run(ctx, live, 'chat.generate', { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10 });
    assert.equal(res.statusCode, 200, res.body);
    const items = assertOk(await get(ctx, live, '/v1/transactions')).data.items;
    assert.ok(items.every((e: { livemode: boolean }) => e.livemode === true));
    assert.deepEqual(await ledgerRows(ctx, testScopeOf(live.workspace.id)), testBefore);
    assert.equal(assertOk(await get(ctx, tk, '/v1/balance')).data.totalMillicents, DEFAULT_TEST_CREDITS_MILLICENTS);
    await assertBothLedgers(ctx, live.workspace.id);
  });

  test('rule "test balance grants": operators add to the test balance only (admin API mode test); the first grant comes once', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps, { credits: 5_000 });
    // Before any test key: the grant makes the test balance, with its first grant.
    const granted = assertOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 700, mode: 'test' })).data.allocation;
    assert.deepEqual([granted.workspaceId, granted.livemode, granted.amountMillicents], [t.workspace.id, false, 700]);
    const { key, secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const tk = { ...t, key, secret };
    assert.equal(assertOk(await get(ctx, tk, '/v1/balance')).data.totalMillicents, DEFAULT_TEST_CREDITS_MILLICENTS + 700);
    // A second test key does not grant again.
    await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    assert.equal(assertOk(await get(ctx, tk, '/v1/balance')).data.totalMillicents, DEFAULT_TEST_CREDITS_MILLICENTS + 700);
    assert.equal(assertOk(await get(ctx, t, '/v1/balance')).data.totalMillicents, 5_000, 'live credits unchanged');
    const liveGrant = assertOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits`, { amountMillicents: 300 })).data.allocation;
    assert.equal(liveGrant.livemode, true);
    assert.equal(assertOk(await get(ctx, t, '/v1/balance')).data.totalMillicents, 5_300);
    // A test twin's id is no workspace an operator can name.
    assertError(await admin(ctx, `/admin/v1/workspaces/${testScopeOf(t.workspace.id)}/credits`, { amountMillicents: 1 }), 404, 'NOT_FOUND');
    await assertBothLedgers(ctx, t.workspace.id);
  });

  test('rule "every rule is the same": a test key\'s budget counts test spending; the workspace ceiling applies to each mode\'s spending on its own', async () => {
    const ctx = getCtx();
    const t = await seedTenant(ctx.deps, { credits: 1_000_000 });
    assertOk(await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { budgets: { dailyMillicents: 3_000 } }));
    const { key, secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'test' });
    const tk = { ...t, key, secret };
    const input = { messages: [{ role: 'user', content: 'hi' }], maxTokens: 10 };
    // The live run's provider reports the input's token bound (8 + 2 + 8) and maxTokens, so at the
    // route's prices (the built-in chat prices) it costs what the simulated run costs: its maximum.
    ctx.live!.openai.chatUsage = { prompt_tokens: 18, completion_tokens: 10 };
    // Live spending up to the ceiling…
    let liveRuns = 0;
    while ((await run(ctx, t, 'chat.generate', input)).statusCode === 200) liveRuns++;
    assert.ok(liveRuns > 0);
    assertError(await run(ctx, t, 'chat.generate', input), 429, 'BUDGET_EXCEEDED');
    // …leaves test mode's ceiling whole: the same number of runs fit there.
    let testRuns = 0;
    while ((await run(ctx, tk, 'chat.generate', input)).statusCode === 200) testRuns++;
    assert.equal(testRuns, liveRuns);
    const usage = assertOk(await get(ctx, tk, '/v1/usage')).data;
    assert.equal(usage.livemode, false);
    assert.equal(usage.workspaceId, t.workspace.id);
    ctx.live!.openai.reset();
    await assertBothLedgers(ctx, t.workspace.id);
  });

  test('rule "test objects stay in test mode": every read refuses the other mode\'s ids (404) and lists only its own', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const host = await verifyHost(ctx, live.workspace.id);
    const made: Record<'live' | 'test', { job: string; media: string; webhook: string }> = {} as never;
    for (const [mode, who] of [['live', live], ['test', tk]] as const) {
      // A failure in each mode: the live job's prediction fails at the paid provider's fake.
      if (mode === 'live') ctx.live!.failNext();
      const res = await run(ctx, who, 'image.generate', { prompt: `${mode} [sim:fail=BOOM]`, width: 256, height: 256 });
      assert.equal(res.statusCode, 202, res.body);
      const media = await upload(ctx, who as Tenant, await png());
      assert.equal(media.statusCode, 200, media.body);
      assert.equal(media.json().data.livemode, mode === 'live');
      const hook = assertOk(await post(ctx, who, '/v1/webhooks', { url: `https://${host}/h`, eventTypes: ['job.failed'], enabled: true })).data;
      assert.equal(hook.webhook.livemode, mode === 'live');
      made[mode] = { job: res.json().data.jobId, media: media.json().data.id, webhook: hook.webhook.id };
    }
    await drain(ctx);
    for (const [mode, who, other] of [['live', live, 'test'], ['test', tk, 'live']] as const) {
      const mine = made[mode];
      const theirs = made[other];
      const livemode = mode === 'live';
      // Own objects: found, with their mode.
      assert.equal(assertOk(await get(ctx, who, `/v1/jobs/${mine.job}`)).data.livemode, livemode);
      assert.equal(assertOk(await get(ctx, who, `/v1/media/${mine.media}`)).data.livemode, livemode);
      // Its signed download URL works and never shows the twin's id (a test scope is `test-{live id}` in the path).
      const link = new URL(assertOk(await get(ctx, who, `/v1/media/${mine.media}/download`)).data.url);
      assert.ok(!link.pathname.includes(testScopeOf(live.workspace.id)), link.pathname);
      assert.ok(link.pathname.includes(livemode ? `/${live.workspace.id}/` : `/test-${live.workspace.id}/`), link.pathname);
      const file = await ctx.app.inject({ method: 'GET', url: `${link.pathname}${link.search}` });
      assert.equal(file.statusCode, 200, `${mode}: the signed URL answered ${file.statusCode}`);
      // The other mode's: 404 on every read and write that names them.
      for (const url of [`/v1/jobs/${theirs.job}`, `/v1/jobs/${theirs.job}/output`, `/v1/media/${theirs.media}`, `/v1/media/${theirs.media}/download`, `/v1/webhooks/${theirs.webhook}/deliveries`]) {
        assertError(await get(ctx, who, url), 404, 'NOT_FOUND');
      }
      assertError(await post(ctx, who, `/v1/jobs/${theirs.job}/cancel`), 404, 'NOT_FOUND');
      assertError(await post(ctx, who, `/v1/jobs/${theirs.job}/retry`), 404, 'NOT_FOUND');
      const stream = await call(ctx, 'GET', `/v1/jobs/${theirs.job}/stream`, { secret: who.secret, workspaceId: who.workspace.id, headers: { accept: 'text/event-stream' } });
      assertError(stream, 404, 'NOT_FOUND');
      const theirDelivery = await ctx.deps.db.selectFrom('webhook_deliveries').select('id').where('webhook_id', '=', theirs.webhook).executeTakeFirstOrThrow();
      assertError(await post(ctx, who, `/v1/webhooks/${theirs.webhook}/deliveries/${theirDelivery.id}/replay`), 404, 'NOT_FOUND');
      for (const action of ['update', 'revoke', 'rotate']) {
        assertError(await post(ctx, who, `/v1/webhooks/${theirs.webhook}/${action}`, action === 'update' ? { enabled: false } : undefined), 404, 'NOT_FOUND');
      }
      // Lists: only this mode's objects.
      const jobs = assertOk(await get(ctx, who, '/v1/jobs')).data.items;
      assert.deepEqual(jobs.map((j: { id: string }) => j.id), [mine.job]);
      assert.ok(jobs.every((j: { livemode: boolean }) => j.livemode === livemode));
      const media = assertOk(await get(ctx, who, '/v1/media')).data.items;
      assert.ok(media.some((m: { id: string }) => m.id === mine.media));
      assert.ok(media.every((m: { id: string; livemode: boolean }) => m.id !== theirs.media && m.livemode === livemode), 'the failed job\'s stored frames, and the upload, of this mode only');
      const hooks = assertOk(await get(ctx, who, '/v1/webhooks')).data.items;
      assert.deepEqual(hooks.map((h: { id: string }) => h.id), [mine.webhook]);
      // Read until the feed shows both (it may hold events back while other suites' transactions run: see the trigger test).
      const events = await waitUntil(async () => assertOk(await get(ctx, who, '/v1/events')).data.items, (items: any[]) => items.length >= 2, 'the job failure and the upload in the feed', 10_000);
      assert.ok(events.every((e: { livemode: boolean; workspaceId: string }) => e.livemode === livemode && e.workspaceId === live.workspace.id));
      const failed = events.find((e: { type: string }) => e.type === 'job.failed');
      assert.equal(failed.data.job.id, mine.job);
      assert.equal(failed.data.job.livemode, livemode);
      const queue = assertOk(await get(ctx, who, '/v1/queue')).data;
      assert.equal(queue.livemode, livemode);
      const ledger = assertOk(await get(ctx, who, '/v1/transactions')).data.items;
      assert.ok(ledger.every((e: { livemode: boolean; jobId: string | null }) => e.livemode === livemode && (e.jobId === null || e.jobId === mine.job)));
      const costs = assertOk(await get(ctx, who, '/v1/costs?bucket=day&from=2026-11-18')).data;
      const spentHere = ledger.filter((e: { type: string }) => e.type !== 'purchase').reduce((s: number, e: { amountMillicents: number }) => s - e.amountMillicents, 0);
      assert.equal(costs.totals.costMillicents, spentHere, 'costs count this mode only');
    }
    // Each mode's webhook got a delivery of its own mode's failure only.
    for (const mode of ['live', 'test'] as const) {
      const rows = await ctx.deps.db.selectFrom('webhook_deliveries').innerJoin('events', 'events.id', 'webhook_deliveries.event_id').select(['events.data_json']).where('webhook_deliveries.webhook_id', '=', made[mode].webhook).execute();
      assert.equal(rows.length, 1);
      assert.equal(JSON.parse(rows[0]!.data_json).job.id, made[mode].job);
    }
    await assertBothLedgers(ctx, live.workspace.id);
  });

  test('rule "test objects stay in test mode" for the money reads: usage, usage history, costs and the CSV exports answer for the caller\'s mode only', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    // Different work in each mode, so that a read mixing them shows it.
    const image = await run(ctx, live, 'image.generate', { prompt: 'live only', width: 256, height: 256 });
    assert.equal(image.statusCode, 202, image.body);
    await drain(ctx);
    const chats: string[] = [];
    for (const text of ['one', 'two']) {
      const chat = await run(ctx, tk, 'chat.generate', { messages: [{ role: 'user', content: text }], maxTokens: 10 });
      assert.equal(chat.statusCode, 200, chat.body);
      chats.push(chat.json().data.jobId);
    }
    const mine = { live: { jobs: [image.json().data.jobId], op: 'image.generate', other: 'chat.generate', who: live }, test: { jobs: chats, op: 'chat.generate', other: 'image.generate', who: tk } };
    for (const [mode, { jobs, op, other, who }] of Object.entries(mine)) {
      const livemode = mode === 'live';
      // Usage history: this mode's operations only, and its points are this mode's meter.
      const history = assertOk(await get(ctx, who, '/v1/usage/history?bucket=day&groupBy=operation')).data;
      assert.equal(history.livemode, livemode);
      const ops = history.totals.lines.map((l: { operation: string }) => l.operation);
      assert.ok(ops.includes(op), `${mode}: ${op} in ${ops.join(', ')}`);
      assert.ok(!ops.includes(other), `${mode}: no ${other} in ${ops.join(', ')}`);
      const usage = assertOk(await get(ctx, who, '/v1/usage')).data;
      assert.equal(usage.livemode, livemode);
      assert.equal(usage.points.monthlyUsed, history.totals.points + 1, `${mode}: the history's points are this mode's meter (plus the usage read)`);
      // Costs: JSON and CSV, this mode's operations only, same totals.
      const costs = assertOk(await get(ctx, who, '/v1/costs?groupBy=operationId')).data;
      assert.equal(costs.livemode, livemode);
      assert.deepEqual(costs.totals.lines.map((l: { operationId: string }) => l.operationId), [op]);
      const costCsv = await get(ctx, who, '/v1/costs?groupBy=operationId&format=csv');
      assert.equal(costCsv.statusCode, 200, costCsv.body);
      const [costHeader, ...costRows] = parseCsv(costCsv.body);
      const at = (name: string) => costHeader!.indexOf(name);
      assert.deepEqual([...new Set(costRows.map((r) => r[at('operationId')]))], [op]);
      assert.equal(costRows.reduce((t, r) => t + Number(r[at('costMillicents')]), 0), costs.totals.costMillicents);
      // The ledger export: this mode's entries only (its jobs, its key, its first grant).
      const ledgerCsv = await get(ctx, who, '/v1/transactions?format=csv');
      assert.equal(ledgerCsv.statusCode, 200, ledgerCsv.body);
      const [header, ...rows] = parseCsv(ledgerCsv.body);
      const column = (name: string) => rows.map((r) => r[header!.indexOf(name)]);
      const json = assertOk(await get(ctx, who, '/v1/transactions')).data.items;
      assert.deepEqual(column('id').sort(), json.map((e: { id: string }) => e.id).sort(), `${mode}: the CSV holds the entries the JSON list shows`);
      assert.deepEqual([...new Set(column('jobId').filter(Boolean))].sort(), [...jobs].sort());
      assert.deepEqual([...new Set(column('keyId').filter(Boolean))], [who.key.id]);
      assert.equal(column('amountMillicents').reduce((t, a) => t + Number(a), 0), assertOk(await get(ctx, who, '/v1/balance')).data.totalMillicents);
    }
    await assertBothLedgers(ctx, live.workspace.id);
  });

  test('rule "webhooks get only their mode\'s events": an event of the test twin fans out to test webhooks, a live one to live webhooks', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const host = await verifyHost(ctx, live.workspace.id);
    const liveHook = assertOk(await post(ctx, live, '/v1/webhooks', { url: `https://${host}/live`, eventTypes: ['job.completed'], enabled: true })).data.webhook.id;
    const testHook = assertOk(await post(ctx, tk, '/v1/webhooks', { url: `https://${host}/test`, eventTypes: ['job.completed'], enabled: true })).data.webhook.id;
    const liveEvent = await emit(ctx, live.workspace.id);
    const testEvent = await emit(ctx, testScopeOf(live.workspace.id));
    const deliveries = async (hook: string) => (await ctx.deps.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', hook).execute()).map((r) => r.event_id);
    assert.deepEqual(await deliveries(liveHook), [liveEvent]);
    assert.deepEqual(await deliveries(testHook), [testEvent]);
  });

  test('rule "the twin follows its workspace": plan changes reach test mode; owners\' and operators\' lists never show a twin', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    assertOk(await admin(ctx, `/admin/v1/workspaces/${live.workspace.id}/settings`, { plan: 'starter' }));
    assert.equal(assertOk(await get(ctx, tk, '/v1/usage')).data.plan, 'starter');
    const listed = assertOk(await get(ctx, tk, '/v1/workspaces')).data.items;
    assert.deepEqual(listed.map((w: { id: string }) => w.id), [live.workspace.id]);
    // A twin's id names no workspace an operator can read or change.
    const twin = testScopeOf(live.workspace.id);
    assertError(await admin(ctx, `/admin/v1/workspaces/${twin}/settings`, { plan: 'free' }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, `/admin/v1/workspaces/${twin}/domains`, { hostname: 'twin.example.com' }), 404, 'NOT_FOUND');
    assertError(await admin(ctx, '/admin/v1/keys', keyBody(live.user.id, [twin])), 400, 'INVALID_REQUEST');
    for (const url of [`/admin/v1/workspaces/${twin}`, `/admin/v1/workspaces/${twin}/jobs`, `/admin/v1/workspaces/${twin}/transactions`]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assertError(res, 404, 'NOT_FOUND');
    }
    assert.equal(assertOk(await get(ctx, tk, '/v1/usage')).data.plan, 'starter', 'the twin kept following its workspace');
    for (const url of ['/admin/v1/workspaces?limit=100', `/admin/v1/users/${live.user.id}`]) {
      const res = await ctx.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(res.statusCode, 200, res.body);
      assert.ok(res.body.includes(live.workspace.id), url);
      assert.ok(!res.body.includes(testScopeOf(live.workspace.id)), `no twin in ${url}`);
    }
  });
  test('rule "test helpers": POST /v1/test/webhook-events sends a sample event to the test webhooks only, signed like any other; live keys get 403 TEST_MODE_ONLY', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const host = await verifyHost(ctx, live.workspace.id);
    const liveHook = assertOk(await post(ctx, live, '/v1/webhooks', { url: `https://${host}/live`, eventTypes: ['job.failed', 'credits.low'], enabled: true })).data.webhook.id;
    const testHook = assertOk(await post(ctx, tk, '/v1/webhooks', { url: `https://${host}/test`, eventTypes: ['job.failed'], enabled: true })).data.webhook.id;
    assertError(await post(ctx, live, '/v1/test/webhook-events', { type: 'job.failed' }), 403, 'TEST_MODE_ONLY');
    const sent = assertOk(await post(ctx, tk, '/v1/test/webhook-events', { type: 'job.failed' }));
    assert.equal(sent.code, 'PUBLIC_TEST_WEBHOOK_EVENTS_CREATE');
    const { event, deliveries } = sent.data;
    assert.equal(deliveries, 1);
    assert.deepEqual([event.type, event.livemode, event.workspaceId, event.data.job.status, event.data.job.livemode], ['job.failed', false, live.workspace.id, 'failed', false]);
    const rows = async (hook: string) => (await ctx.deps.db.selectFrom('webhook_deliveries').select('event_id').where('webhook_id', '=', hook).execute()).map((r) => r.event_id);
    assert.deepEqual(await rows(testHook), [event.id]);
    assert.deepEqual(await rows(liveHook), [], 'the live webhook gets nothing');
    // The sample is in the test feed, shaped like the real thing; not in the live feed. The feed
    // shows an event once no transaction that began before it can still commit an earlier one
    // (docs/decisions.md "Events and webhooks"); on a PostgreSQL server shared with other suites
    // that can take a few reads, so read until it shows.
    const feed = await waitUntil(async () => assertOk(await get(ctx, tk, '/v1/events?types=job.failed')).data.items, (items: any[]) => items.length > 0, 'the sample in the test feed', 10_000);
    assert.deepEqual(feed.map((e: { id: string }) => e.id), [event.id]);
    assert.deepEqual(assertOk(await get(ctx, live, '/v1/events?types=job.failed')).data.items, []);
    // Every type has a sample; a type nobody subscribed to is stored and sent nowhere.
    const low = assertOk(await post(ctx, tk, '/v1/test/webhook-events', { type: 'credits.low' })).data;
    assert.equal(low.deliveries, 0);
    assert.deepEqual(low.event.data, { spendableMillicents: 900, thresholdMillicents: 1_000 });
    assertError(await post(ctx, tk, '/v1/test/webhook-events', { type: 'job.exploded' }), 400, 'INVALID_REQUEST');
  });
  test('rule "test objects stay in test mode" over MCP: a test key follows its own runs as tasks; a live key finds no test task', async () => {
    const ctx = getCtx();
    const { live, test: tk } = await tenantWithTestKey(ctx);
    const testClient = await connectClient(ctx, tk.secret);
    const liveClient = await connectClient(ctx, live.secret);
    try {
      const created = await testClient.request(
        { method: 'tools/call', params: { name: 'service_run_music_generate', arguments: { workspaceId: live.workspace.id, prompt: 'a calm tune', durationSeconds: 5 }, task: {} } },
        CreateTaskResultSchema,
      );
      const taskId = created.task.taskId;
      assert.equal((await testClient.experimental.tasks.getTask(taskId)).status, 'working');
      await drain(ctx);
      assert.equal((await testClient.experimental.tasks.getTask(taskId)).status, 'completed');
      await assert.rejects(liveClient.experimental.tasks.getTask(taskId), /not found|Task/i, 'a live key finds no test task');
      assert.equal(assertOk(await get(ctx, tk, `/v1/jobs/${taskId}`)).data.livemode, false);
    } finally {
      await testClient.close();
      await liveClient.close();
    }
    await assertBothLedgers(ctx, live.workspace.id);
  });
  // Live work runs on the paid providers' fakes (support/live-backend.ts), test work on the simulated provider.
}, testKeySuite({ live: true }));
