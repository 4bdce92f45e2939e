/**
 * Alerts as events (issue 19 part 3; docs/decisions.md "Alerts"): budget.threshold_crossed,
 * credits.low, allocation.expiring, key.expiring, key.suspended and webhook.failing appear in the
 * event feed, are delivered to webhooks subscribed to their type (and only those), and are listed
 * as workspace notifications; each fires at most once per threshold and period (or per allocation
 * or key), by the notifications' unique index. Periods and expiries move with the fake clock.
 * Tenants whose alerts come from running operations (budgets, credits.low at admission) use test
 * keys (simulated work, the test balance, alerts in the test twin: the operator's notifications
 * list shows the live workspace's only, so theirs are read from the twin's rows, as the admin API
 * presents them); the others run nothing and stay live (operator debits, expiries, keys, webhooks).
 */
import { before, test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, TEST_ADMIN_TOKEN, testKeySuite, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { assertLedgerInvariants } from '../support/ledger.js';
import { run } from '../support/jobs.js';
import { scopeOf, seedKey, seedTenant, type Tenant, type TenantOptions } from '../support/seed.js';
import { createHook, deliveryRows, emit, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { runMaintenanceOnce } from '../../src/worker/maintenance.js';
import { ALERT_EVENT_TYPES } from '../../src/modules/events/store.js';
import { listNotifications } from '../../src/modules/notifications/store.js';
import { presentNotification } from '../../src/admin/present.js';
import { checkRefusals } from '../support/openapi-responses.js';
import { batchCounts } from '../support/batch-counts.js';

const receiver = HttpsReceiver.forThisFile();
// The test certificate names these two (Node does not match *.localhost); each test's webhooks
// differ by path.
const DAY = 86_400_000;
const IMAGE = { prompt: 'alert test image' };

interface FeedEvent {
  id: string;
  type: string;
  workspaceId: string;
  createdAt: string;
  data: Record<string, any>;
}

/**
 * The feed's events of `types`, once at least `atLeast` are visible. On a shared PostgreSQL server
 * an unrelated open transaction holds the feed back for its duration (feed-store.ts), so a state
 * wait; counts that must not grow are checked on the notifications instead (alertCount).
 */
async function feed(ctx: TestContext, t: Tenant, types: string, atLeast: number): Promise<FeedEvent[]> {
  for (let i = 0; ; i++) {
    const res = await call(ctx, 'GET', '/v1/events', { secret: t.secret, workspaceId: t.workspace.id, query: { types, limit: '100' } });
    const items = assertOk(res).data.items as FeedEvent[];
    if (items.length >= atLeast || i >= 400) return items;
    await delay(25);
  }
}

/** Alerts of `kind` the workspace has: its notifications, written in the transaction of each alert's event. */
async function alertCount(ctx: TestContext, workspaceId: string, kind: string): Promise<number> {
  const r = await ctx.deps.db
    .selectFrom('notifications')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('kind', '=', kind)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** The live workspace's notifications, as the operator lists them (admin API). */
async function notifications(ctx: TestContext, workspaceId: string): Promise<Array<Record<string, any>>> {
  const res = await ctx.app.inject({ method: 'GET', url: `/admin/v1/workspaces/${workspaceId}/notifications?limit=100`, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
  return assertOk(res).data.items;
}

/**
 * The notifications of a test tenant's alerts: rows of its test twin, which the operator's list
 * (live workspaces only) does not show; read from the store and presented as the admin API
 * presents a notification. The live workspace's list holds none of them.
 */
async function testNotifications(ctx: TestContext, t: Tenant): Promise<Array<Record<string, any>>> {
  assert.equal(t.key.mode, 'test');
  const rows = await listNotifications(ctx.deps.db, scopeOf(t), undefined, 100);
  const live = new Set((await notifications(ctx, t.workspace.id)).map((n) => n.id));
  assert.ok(rows.every((n) => !live.has(n.id)), 'a test alert is not in the live workspace\'s notifications');
  return rows.map((n) => JSON.parse(JSON.stringify(presentNotification(n))));
}

/** A tenant with generous points and waiting-jobs limits (and `settings` applied by the admin API); `mode` test for tenants that run operations. */
async function tenant(ctx: TestContext, credits: number, settings: Record<string, unknown> = {}, key: TenantOptions['key'] = {}, mode: 'live' | 'test' = 'live'): Promise<Tenant> {
  const t = await seedTenant(ctx.deps, { credits, key, mode });
  const res = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/settings`, { limits: { pointsPerMinute: 1_000_000, waitingJobs: 1000 }, ...settings });
  assert.equal(res.statusCode, 200, res.body);
  return t;
}

/** Queues an image job; returns its id and maximum cost. */
async function queue(ctx: TestContext, t: Tenant): Promise<{ jobId: string; maximum: number }> {
  const res = await run(ctx, t, 'image.generate', IMAGE);
  assert.equal(res.statusCode, 202, res.body);
  const data = res.json().data;
  return { jobId: data.jobId, maximum: data.maximumCostMillicents };
}

async function cancel(ctx: TestContext, t: Tenant, jobId: string): Promise<void> {
  const res = await call(ctx, 'POST', `/v1/jobs/${jobId}/cancel`, { secret: t.secret, workspaceId: t.workspace.id });
  assert.equal(res.statusCode, 200, res.body);
}

/** The maximum cost of one image job, measured on a throwaway tenant. */
async function imageMaximum(ctx: TestContext): Promise<number> {
  const t = await tenant(ctx, 10_000_000, {}, {}, 'test');
  const { jobId, maximum } = await queue(ctx, t);
  await cancel(ctx, t, jobId);
  return maximum;
}

/** Delivers what is due; returns the bodies the receiver got on `path`. */
async function deliveredTo(ctx: TestContext, path: string): Promise<FeedEvent[]> {
  await worker(ctx).runOnce();
  return receiver.requests.filter((r) => r.path === path).map((r) => JSON.parse(r.body) as FeedEvent);
}

describeEachDatabase(
  'alerts',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('budget.threshold_crossed (workspace budget): fires at 50 % once, not again in the same day, at 80 and 100 %, and again the next day; feed, subscribed webhook only, notifications', async () => {
      const ctx = get();
      receiver.reset();
      const m = await imageMaximum(ctx);
      const t = await tenant(ctx, 100 * m, { budgets: { dailyMillicents: 2 * m } }, {}, 'test');
      const watching = await createHook(ctx, receiver, { tenant: t, hostname: 'hooks.localhost', eventTypes: ['budget.threshold_crossed'], path: '/budget' });
      const other = await createHook(ctx, receiver, { tenant: t, hostname: 'hooks-b.localhost', eventTypes: ['job.completed', 'credits.low'], path: '/other' });

      const first = await queue(ctx, t);
      let events = await feed(ctx, t, 'budget.threshold_crossed', 1);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.data, {
        budget: { scope: 'workspace', period: 'day' },
        thresholdPercent: 50,
        spentMillicents: 0,
        reservedMillicents: m,
        limitMillicents: 2 * m,
      });
      assert.equal(events[0]!.workspaceId, t.workspace.id);

      // Below 50 % again (the hold released without a charge), then across it again: same day, no second alert.
      await cancel(ctx, t, first.jobId);
      const second = await queue(ctx, t);
      assert.equal(await alertCount(ctx, scopeOf(t), 'budget.threshold_crossed'), 1, 'not again in the same period');

      // Across 80 and 100 % with the next hold.
      const third = await queue(ctx, t);
      events = await feed(ctx, t, 'budget.threshold_crossed', 3);
      assert.deepEqual(events.map((e) => e.data.thresholdPercent), [50, 80, 100]);
      assert.equal(events[2]!.data.reservedMillicents, 2 * m);
      assertError(await run(ctx, t, 'image.generate', IMAGE), 429, 'BUDGET_EXCEEDED');
      assert.equal(await alertCount(ctx, scopeOf(t), 'budget.threshold_crossed'), 3, 'a refusal raises nothing');

      // Delivered to the subscribed webhook, not to the other one.
      const bodies = await deliveredTo(ctx, '/budget');
      assert.deepEqual(bodies.map((b) => [b.type, b.data.thresholdPercent]), [['budget.threshold_crossed', 50], ['budget.threshold_crossed', 80], ['budget.threshold_crossed', 100]]);
      assert.deepEqual(bodies.map((b) => b.id), events.map((e) => e.id), 'the webhook body is the feed entry');
      assert.equal((await deliveryRows(ctx, watching.webhookId)).length, 3);
      assert.equal((await deliveryRows(ctx, other.webhookId)).length, 0, 'not delivered to a webhook not subscribed to it');

      // In the workspace notifications, under the event's id.
      const listed = (await testNotifications(ctx, t)).filter((n) => n.kind === 'budget.threshold_crossed');
      assert.deepEqual(listed.map((n) => n.id).sort(), events.map((e) => e.id).sort());
      assert.ok(listed.every((n) => n.webhookId === null && typeof n.message === 'string' && n.details.budget.scope === 'workspace'));

      // The next day is the next period: 50 % again.
      await cancel(ctx, t, second.jobId);
      await cancel(ctx, t, third.jobId);
      ctx.clock.advance(DAY);
      await queue(ctx, t);
      events = await feed(ctx, t, 'budget.threshold_crossed', 4);
      assert.deepEqual(events.map((e) => e.data.thresholdPercent), [50, 80, 100, 50], 'again in the next period');
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    });

    test('budget.threshold_crossed (key budget): names the key; week and month budgets of the workspace cross on their own', async () => {
      const ctx = get();
      const m = await imageMaximum(ctx);
      const t = await tenant(ctx, 100 * m, { budgets: { weeklyMillicents: 10 * m, monthlyMillicents: 2 * m } }, { budgets: { dailyMillicents: 2 * m } }, 'test');
      await queue(ctx, t);
      const events = await feed(ctx, t, 'budget.threshold_crossed', 2);
      const got = events.map((e) => e.data).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      assert.deepEqual(got, [
        { budget: { scope: 'key', keyId: t.key.id, period: 'day' }, thresholdPercent: 50, spentMillicents: 0, reservedMillicents: m, limitMillicents: 2 * m },
        { budget: { scope: 'workspace', period: 'month' }, thresholdPercent: 50, spentMillicents: 0, reservedMillicents: m, limitMillicents: 2 * m },
      ]);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
    });

    test('credits.low: fires when a hold leaves spendable credits below lowCreditsMillicents, once per UTC day, again the next day; off by default', async () => {
      const ctx = get();
      receiver.reset();
      const m = await imageMaximum(ctx);
      // Off by default: no threshold, no alert however low.
      const off = await tenant(ctx, m, {}, {}, 'test');
      await queue(ctx, off);
      assert.equal(await alertCount(ctx, scopeOf(off), 'credits.low'), 0);

      const t = await tenant(ctx, 10 * m, { lowCreditsMillicents: 8 * m + 1 }, {}, 'test');
      const hook = await createHook(ctx, receiver, { tenant: t, hostname: 'hooks.localhost', eventTypes: ['credits.low'], path: '/low' });
      const countsBefore = await batchCounts(ctx);
      const first = await queue(ctx, t);
      assert.equal(await alertCount(ctx, scopeOf(t), 'credits.low'), 0, 'spendable 9 m is not below the threshold');
      await queue(ctx, t);
      let events = await feed(ctx, t, 'credits.low', 1);
      assert.equal(events.length, 1);
      assert.deepEqual(events[0]!.data, { spendableMillicents: 8 * m, thresholdMillicents: 8 * m + 1 });
      await queue(ctx, t);
      await cancel(ctx, t, first.jobId);
      await queue(ctx, t);
      assert.equal(await alertCount(ctx, scopeOf(t), 'credits.low'), 1, 'not again the same day');
      if (ctx.deps.caps.batchedWrites) {
        // PostgreSQL admits these runs in batches; only the batch that raises the alert is admitted one by one.
        const counts = await batchCounts(ctx);
        const delta = (k: string) => (counts[k] ?? 0) - (countsBefore[k] ?? 0);
        assert.deepEqual([delta('admission:batched'), delta('admission:fallback')], [3, 1]);
      }
      const bodies = await deliveredTo(ctx, '/low');
      assert.deepEqual(bodies.map((b) => b.id), [events[0]!.id]);
      assert.equal((await deliveryRows(ctx, hook.webhookId)).length, 1);
      const listed = (await testNotifications(ctx, t)).filter((n) => n.kind === 'credits.low');
      assert.deepEqual(listed.map((n) => n.id), [events[0]!.id]);

      ctx.clock.advance(DAY);
      await queue(ctx, t);
      events = await feed(ctx, t, 'credits.low', 2);
      assert.equal(events.length, 2, 'again the next day');
      assert.ok(events[1]!.data.spendableMillicents < 8 * m + 1);
      await assertLedgerInvariants(ctx.deps, scopeOf(t));
      await assertLedgerInvariants(ctx.deps, scopeOf(off));
    });

    test('credits.low: an operator debit and an expiry that leave spendable credits below the threshold raise it too', async () => {
      const ctx = get();
      const t = await tenant(ctx, 10_000, { lowCreditsMillicents: 5_000 });
      const debit = await admin(ctx, `/admin/v1/workspaces/${t.workspace.id}/credits/adjust`, { amountMillicents: -6_000, reason: 'chargeback' });
      assert.equal(debit.statusCode, 200, debit.body);
      let events = await feed(ctx, t, 'credits.low', 1);
      assert.deepEqual(events.map((e) => e.data), [{ spendableMillicents: 4_000, thresholdMillicents: 5_000 }]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);

      const u = await tenant(ctx, 4_000, { lowCreditsMillicents: 5_000 });
      await grantCredits(ctx.deps, u.workspace.id, { amountMillicents: 10_000, expiresAt: ctx.clock.now() + 60_000 });
      ctx.clock.advance(60_001);
      await runMaintenanceOnce(ctx.deps);
      events = await feed(ctx, u, 'credits.low', 1);
      assert.deepEqual(events.map((e) => e.data), [{ spendableMillicents: 4_000, thresholdMillicents: 5_000 }]);
      await assertLedgerInvariants(ctx.deps, u.workspace.id);
    });

    test('credits.low: lowCreditsMillicents is set at creation and by settings (admin API), null turns it off; bad values are 400', async () => {
      const ctx = get();
      const t = await seedTenant(ctx.deps);
      const created = await admin(ctx, '/admin/v1/workspaces', { name: 'Low', plan: 'pro', ownerUserId: t.user.id, lowCreditsMillicents: 1_000 });
      assert.equal(created.statusCode, 200, created.body);
      assert.equal(created.json().data.workspace.lowCreditsMillicents, 1_000);
      const id = created.json().data.workspace.id;
      const set = await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { lowCreditsMillicents: 2_500 });
      assert.equal(set.json().data.workspace.lowCreditsMillicents, 2_500);
      const kept = await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { plan: 'starter' });
      assert.equal(kept.json().data.workspace.lowCreditsMillicents, 2_500, 'a change that does not name it keeps it');
      const cleared = await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { lowCreditsMillicents: null });
      assert.equal(cleared.json().data.workspace.lowCreditsMillicents, null);
      const read = await ctx.app.inject({ method: 'GET', url: `/admin/v1/workspaces/${id}`, headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
      assert.equal(assertOk(read).data.workspace.lowCreditsMillicents, null);
      for (const bad of [0, -1, 1.5, '100', Number.MAX_SAFE_INTEGER + 1]) {
        assertError(await admin(ctx, `/admin/v1/workspaces/${id}/settings`, { lowCreditsMillicents: bad }), 400, 'INVALID_REQUEST');
        assertError(await admin(ctx, '/admin/v1/workspaces', { name: 'Bad', plan: 'pro', ownerUserId: t.user.id, lowCreditsMillicents: bad }), 400, 'INVALID_REQUEST');
      }
    });

    test('allocation.expiring: 7 days before the expiry, once per allocation, from housekeeping', async () => {
      const ctx = get();
      receiver.reset();
      const t = await tenant(ctx, 1_000);
      const hook = await createHook(ctx, receiver, { tenant: t, hostname: 'hooks.localhost', eventTypes: ['allocation.expiring'], path: '/alloc' });
      const expiresAt = ctx.clock.now() + 10 * DAY;
      const allocation = await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 5_000, expiresAt });
      await runMaintenanceOnce(ctx.deps);
      assert.equal(await alertCount(ctx, t.workspace.id, 'allocation.expiring'), 0, 'not 10 days before');
      ctx.clock.advance(3 * DAY + 1);
      await runMaintenanceOnce(ctx.deps);
      await runMaintenanceOnce(ctx.deps);
      const events = await feed(ctx, t, 'allocation.expiring', 1);
      assert.equal(await alertCount(ctx, t.workspace.id, 'allocation.expiring'), 1, 'once per allocation');
      assert.deepEqual(events[0]!.data, {
        allocation: { id: allocation.id, remainingMillicents: 5_000, expiresAt: new Date(expiresAt).toISOString(), provenance: allocation.provenance, createdAt: new Date(allocation.createdAt).toISOString() },
      });
      ctx.clock.advance(DAY);
      await runMaintenanceOnce(ctx.deps);
      assert.equal(await alertCount(ctx, t.workspace.id, 'allocation.expiring'), 1, 'not again the next day');
      assert.deepEqual((await deliveredTo(ctx, '/alloc')).map((b) => b.id), [events[0]!.id]);
      assert.equal((await deliveryRows(ctx, hook.webhookId)).length, 1);
      assert.deepEqual((await notifications(ctx, t.workspace.id)).filter((n) => n.kind === 'allocation.expiring').map((n) => n.id), [events[0]!.id]);
      await assertLedgerInvariants(ctx.deps, t.workspace.id);
    });

    test('key.expiring: 7 days before, once per key and workspace; a new expiry set by the operator is alerted again', async () => {
      const ctx = get();
      const t = await tenant(ctx, 1_000);
      const second = await seedTenant(ctx.deps);
      const expiresAt = ctx.clock.now() + 8 * DAY;
      const { key } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { expiresAt });
      await runMaintenanceOnce(ctx.deps);
      assert.equal(await alertCount(ctx, t.workspace.id, 'key.expiring'), 0);
      ctx.clock.advance(DAY + 1);
      await runMaintenanceOnce(ctx.deps);
      await runMaintenanceOnce(ctx.deps);
      let events = await feed(ctx, t, 'key.expiring', 1);
      assert.equal(await alertCount(ctx, t.workspace.id, 'key.expiring'), 1);
      assert.deepEqual(events.map((e) => e.data), [{ keyId: key.id, expiresAt: new Date(expiresAt).toISOString() }]);
      assert.equal(await alertCount(ctx, second.workspace.id, 'key.expiring'), 0, 'only the workspaces of the key');
      const later = new Date(ctx.clock.now() + 5 * DAY).toISOString();
      assert.equal((await admin(ctx, `/admin/v1/keys/${key.id}/update`, { expiresAt: later })).statusCode, 200);
      await runMaintenanceOnce(ctx.deps);
      events = await feed(ctx, t, 'key.expiring', 2);
      assert.deepEqual(events.map((e) => e.data.expiresAt), [new Date(expiresAt).toISOString(), later]);
      assert.equal((await notifications(ctx, t.workspace.id)).filter((n) => n.kind === 'key.expiring').length, 2);
    });

    test('key.suspended: a key suspended after repeated authorization failures alerts its workspace once a day', async () => {
      const ctx = get();
      const t = await tenant(ctx, 1_000);
      const { key, secret } = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { scopes: ['usage:read'] });
      const hammer = async () => {
        let last;
        for (let i = 0; i < 30; i++) last = await call(ctx, 'GET', '/v1/balance', { secret, workspaceId: t.workspace.id });
        assertError(last!, 403, 'KEY_SUSPENDED');
        return Date.parse(last!.json().details.suspendedUntil);
      };
      const until = await hammer();
      let events = await feed(ctx, t, 'key.suspended', 1);
      assert.deepEqual(events.map((e) => e.data), [{ keyId: key.id, until: new Date(until).toISOString() }]);
      ctx.clock.advance(6 * 60_000);
      await hammer();
      assert.equal(await alertCount(ctx, t.workspace.id, 'key.suspended'), 1, 'not again the same day');
      ctx.clock.advance(DAY);
      await hammer();
      events = await feed(ctx, t, 'key.suspended', 2);
      assert.equal(events.length, 2, 'again the next day');
      assert.equal((await notifications(ctx, t.workspace.id)).filter((n) => n.kind === 'key.suspended').length, 2);
    });

    test('webhook.failing: also an event, delivered to another webhook subscribed to it, once per webhook per day', async () => {
      const ctx = get();
      receiver.reset();
      const failing = await createHook(ctx, receiver, { hostname: 'hooks.localhost', eventTypes: ['job.completed'], path: '/dead' });
      const t = failing.tenant;
      await createHook(ctx, receiver, { tenant: t, hostname: 'hooks-b.localhost', eventTypes: ['webhook.failing'], path: '/ops' });
      await emit(ctx, t.workspace.id);
      receiver.reply({ status: 410 });
      await worker(ctx).runOnce();
      const events = await feed(ctx, t, 'webhook.failing', 1);
      assert.equal(events.length, 1);
      assert.equal(events[0]!.data.webhookId, failing.webhookId);
      assert.equal(events[0]!.data.lastStatusCode, 410);
      assert.equal(events[0]!.data.final, true);
      const bodies = await deliveredTo(ctx, '/ops');
      assert.deepEqual(bodies.map((b) => [b.type, b.id]), [['webhook.failing', events[0]!.id]]);
      await emit(ctx, t.workspace.id);
      receiver.reply({ status: 410 });
      await worker(ctx).runOnce();
      assert.equal(await alertCount(ctx, t.workspace.id, 'webhook.failing'), 1, 'capped at one per webhook per day');
      const listed = (await notifications(ctx, t.workspace.id)).filter((n) => n.kind === 'webhook.failing');
      assert.deepEqual(listed.map((n) => [n.id, n.webhookId]), [[events[0]!.id, failing.webhookId]]);
    });

    test('eventTypes: webhooks accept every alert type, the feed filters by them, unknown names stay 400', async () => {
      const ctx = get();
      const hook = await createHook(ctx, receiver, { hostname: 'hooks.localhost', eventTypes: [...ALERT_EVENT_TYPES] });
      const t = hook.tenant;
      const listed = assertOk(await call(ctx, 'GET', '/v1/webhooks', { secret: t.secret, workspaceId: t.workspace.id })).data.items;
      assert.deepEqual(listed[0].eventTypes, [...ALERT_EVENT_TYPES]);
      const update = await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/update`, { secret: t.secret, workspaceId: t.workspace.id, body: { eventTypes: ['job.completed', 'key.expiring', 'budget.threshold_crossed'] } });
      assert.equal(update.statusCode, 200, update.body);
      for (const bad of [['budget.crossed'], ['credits.low', 'credits.low'], ['credits.LOW']]) {
        assertError(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/update`, { secret: t.secret, workspaceId: t.workspace.id, body: { eventTypes: bad } }), 400, 'INVALID_REQUEST');
      }
      assert.equal((await call(ctx, 'GET', '/v1/events', { secret: t.secret, workspaceId: t.workspace.id, query: { types: ALERT_EVENT_TYPES.join(',') } })).statusCode, 200);
      assertError(await call(ctx, 'GET', '/v1/events', { secret: t.secret, workspaceId: t.workspace.id, query: { types: 'credits.high' } }), 400, 'INVALID_REQUEST');
    });
  },
  testKeySuite({ env: WEBHOOK_TEST_ENV }),
);
