/**
 * Webhook delivery through a real HTTPS receiver on loopback (test-only certificate trusted via
 * NODE_EXTRA_CA_CERTS, `hooks.localhost` verified by the operator, loopback allowed by
 * EGRESS_ALLOW_CIDRS): signing checked by the `stripe` package, retries, permanent failures,
 * redirects, timeouts, attempt limits, crash recovery and lease fencing. Workers are driven with
 * runOnce() and the fake clock.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { assertOk } from '../support/assertions.js';
import { scopeOf, seedKey, seedTenant } from '../support/seed.js';
import { waitUntil } from '../support/wait.js';
import { advancePastNextAttempt, createHook, verifySignature as verify, deliveryRows, emit, onlyDelivery, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { claimDeliveries, refreshWebhookState, type ClaimedDelivery } from '../../src/modules/webhooks/delivery-claim.js';
import { finishSucceeded } from '../../src/modules/webhooks/delivery-store.js';
import { recordOutcome } from '../../src/modules/webhooks/delivery-attempt.js';
import { WEBHOOK_USER_AGENT } from '../../src/modules/webhooks/signing.js';
import { DeliveryWorker } from '../../src/modules/webhooks/delivery-worker.js';
import { onDeliveriesScheduled } from '../../src/modules/webhooks/fan-out.js';
import { insertEvent } from '../../src/modules/events/store.js';
import { presentEvent } from '../../src/modules/events/service.js';

const receiver = HttpsReceiver.forThisFile();

describeEachDatabase(
  'webhook delivery',
  (get) => {
    test('rule "a webhook is created in one mode and receives only that mode\'s events": a test key\'s webhook is delivered, signed, with livemode false, on the hostname the live workspace verified; the live webhook gets the live event', async () => {
      const ctx = get();
      receiver.reset();
      const t = await seedTenant(ctx.deps, { mode: 'test' });
      const testHook = await createHook(ctx, receiver, { tenant: t, path: '/test-mode' });
      const live = await seedKey(ctx.deps, t.user.id, [t.workspace.id], { mode: 'live' });
      const liveHook = assertOk(await call(ctx, 'POST', '/v1/webhooks', { secret: live.secret, workspaceId: t.workspace.id, body: { url: receiver.url(testHook.hostname, '/live-mode'), eventTypes: ['job.completed'], enabled: true } })).data;
      const testEvent = await emit(ctx, scopeOf(t), 'job.completed');
      const liveEvent = await emit(ctx, t.workspace.id, 'job.completed');
      assert.equal(await worker(ctx).runOnce(), 2);
      const byPath = (path: string) => receiver.requests.filter((r) => r.path === path);
      assert.equal(byPath('/test-mode').length, 1);
      const sent = byPath('/test-mode')[0]!;
      const body = verify(ctx, sent.body, String(sent.headers['service-signature']), testHook.secret);
      assert.deepEqual([body.id, body.livemode, body.workspaceId], [testEvent, false, t.workspace.id]);
      assert.equal((await onlyDelivery(ctx, testHook.webhookId)).status, 'succeeded');
      assert.equal(byPath('/live-mode').length, 1);
      const liveBody = verify(ctx, byPath('/live-mode')[0]!.body, String(byPath('/live-mode')[0]!.headers['service-signature']), liveHook.secret);
      assert.deepEqual([liveBody.id, liveBody.livemode], [liveEvent, true]);
    });

    test('signed POST: body is the feed event, headers name the service and the event, stripe.webhooks.constructEvent verifies it', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const eventId = await emit(ctx, hook.tenant.workspace.id, 'job.completed');
      assert.equal(await worker(ctx).runOnce(), 1);
      assert.equal(receiver.requests.length, 1);
      const req = receiver.requests[0]!;
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/hooks');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal(req.headers['user-agent'], WEBHOOK_USER_AGENT);
      assert.equal(req.headers['service-event-id'], eventId);
      const body = JSON.parse(req.body);
      assert.deepEqual(Object.keys(body), ['id', 'type', 'workspaceId', 'livemode', 'createdAt', 'data']);
      assert.equal(body.id, eventId, 'Service-Event-Id equals the body id');
      assert.equal(body.type, 'job.completed');
      assert.equal(body.workspaceId, hook.tenant.workspace.id);
      assert.equal(body.createdAt, new Date(ctx.clock.now()).toISOString());
      const header = String(req.headers['service-signature']);
      assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
      assert.equal(Number(/^t=(\d+)/.exec(header)![1]), Math.floor(ctx.clock.now() / 1000), 't is the send time in unix seconds');
      assert.equal(verify(ctx, req.body, header, hook.secret).id, eventId);
      assert.throws(() => verify(ctx, req.body, header, 'whsec_wrong'), /signature/i);
      // The same object as the event feed shows (the feed may hold a fresh event back on a busy
      // PostgreSQL server until older transactions end; its presenter is compared directly).
      const stored = await ctx.deps.db.selectFrom('events').selectAll().where('id', '=', eventId).executeTakeFirstOrThrow();
      assert.equal(req.body, JSON.stringify(presentEvent({ id: stored.id, workspaceId: stored.workspace_id, type: stored.type as 'job.completed', data: JSON.parse(stored.data_json), createdAt: Number(stored.created_at_ms) })));
      const feed = await call(ctx, 'GET', '/v1/events', { secret: hook.tenant.secret, workspaceId: hook.tenant.workspace.id });
      assert.equal(feed.statusCode, 200, feed.body);
      const listed = feed.json().data.items.find((e: { id: string }) => e.id === eventId);
      if (listed) assert.deepEqual(listed, body);
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.attempts), 1);
      assert.equal(Number(row.last_status_code), 200);
      assert.equal(row.last_error_code, null);
      assert.equal(Number(row.delivered_at_ms), ctx.clock.now());
    });

    test('fan-out: one delivery per active webhook subscribed to the type, in the event transaction', async () => {
      const ctx = get();
      receiver.reset();
      const a = await createHook(ctx, receiver, { eventTypes: ['job.completed'] });
      const b = await createHook(ctx, receiver, { tenant: a.tenant, eventTypes: ['job.failed'] });
      const disabled = await createHook(ctx, receiver, { tenant: a.tenant, eventTypes: ['job.completed'] });
      const off = await call(ctx, 'POST', `/v1/webhooks/${disabled.webhookId}/update`, { secret: a.tenant.secret, workspaceId: a.tenant.workspace.id, body: { enabled: false } });
      assert.equal(off.statusCode, 200, off.body);
      await emit(ctx, a.tenant.workspace.id, 'job.completed');
      assert.equal((await deliveryRows(ctx, a.webhookId)).length, 1);
      assert.equal((await deliveryRows(ctx, b.webhookId)).length, 0, 'not subscribed');
      assert.equal((await deliveryRows(ctx, disabled.webhookId)).length, 0, 'disabled');
      const row = (await deliveryRows(ctx, a.webhookId))[0]!;
      assert.equal(row.status, 'pending');
      assert.equal(Number(row.next_attempt_at_ms), ctx.clock.now());
      // A rolled-back event leaves no delivery behind.
      await assert.rejects(
        ctx.deps.db.transaction().execute(async (trx) => {
          await insertEvent(trx, a.tenant.workspace.id, 'job.completed', { job: {} }, ctx.clock.now());
          throw new Error('rollback');
        }),
        /rollback/,
      );
      assert.equal((await deliveryRows(ctx, a.webhookId)).length, 1);
      await worker(ctx).runOnce();
    });

    test('retry on 500, then success: each attempt signed at its own send time over the same bytes', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const eventId = await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      let row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'pending');
      assert.equal(Number(row.attempts), 1);
      assert.equal(Number(row.last_status_code), 500);
      assert.equal(row.last_error_code, 'WEBHOOK_HTTP_ERROR');
      const wait = Number(row.next_attempt_at_ms) - ctx.clock.now();
      assert.ok(wait >= 1000 && wait <= 1200, `first retry after base..base+20 % (got ${wait} ms)`);
      assert.equal(await worker(ctx).runOnce(), 0, 'not due yet');
      ctx.clock.advance(3600_000); // an hour later: still verifies at the receiver's clock
      await worker(ctx).runOnce();
      row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.attempts), 2);
      assert.equal(receiver.requests.length, 2);
      const [first, second] = receiver.requests as [any, any];
      assert.equal(first.body, second.body, 'same bytes at every attempt');
      assert.equal(second.headers['service-event-id'], eventId);
      const t1 = Number(/^t=(\d+)/.exec(first.headers['service-signature'])![1]);
      const t2 = Number(/^t=(\d+)/.exec(second.headers['service-signature'])![1]);
      assert.ok(t2 - t1 >= 3600, 'the retry is signed at its own time');
      assert.equal(verify(ctx, second.body, second.headers['service-signature'], hook.secret).id, eventId);
      assert.throws(() => verify(ctx, first.body, first.headers['service-signature'], hook.secret), /timestamp/i, 'the first signature is now stale');
    });

    test('retry on a dropped connection (WEBHOOK_NETWORK_ERROR), then success', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ drop: true });
      await worker(ctx).runOnce();
      let row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'pending');
      assert.equal(row.last_error_code, 'WEBHOOK_NETWORK_ERROR');
      assert.equal(row.last_status_code, null);
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.attempts), 2);
    });

    test('permanent failures: 400, 401, 403, 404 and 410 fail at once (WEBHOOK_HTTP_ERROR, lastStatusCode)', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      for (const status of [400, 401, 403, 404, 410]) {
        const eventId = await emit(ctx, hook.tenant.workspace.id);
        receiver.reply({ status });
        await worker(ctx).runOnce();
        const row = (await deliveryRows(ctx, hook.webhookId)).find((r) => r.event_id === eventId)!;
        assert.equal(row.status, 'failed', `${status}`);
        assert.equal(Number(row.attempts), 1);
        assert.equal(Number(row.last_status_code), status);
        assert.equal(row.last_error_code, 'WEBHOOK_HTTP_ERROR');
        assert.equal(row.delivered_at_ms, null);
      }
      ctx.clock.advance(86_400_000);
      assert.equal(await worker(ctx).runOnce(), 0, 'nothing is retried');
      assert.equal(receiver.requests.length, 5);
    });

    test('other statuses are retried: 408, 429, 502 and 503', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      for (const status of [408, 429, 502, 503]) {
        const eventId = await emit(ctx, hook.tenant.workspace.id);
        receiver.reply({ status });
        await worker(ctx).runOnce();
        const row = (await deliveryRows(ctx, hook.webhookId)).find((r) => r.event_id === eventId)!;
        assert.equal(row.status, 'pending', `${status}`);
        assert.equal(row.last_error_code, 'WEBHOOK_HTTP_ERROR');
      }
      ctx.clock.advance(10_000);
      assert.equal(await worker(ctx).runOnce(), 4);
      assert.ok((await deliveryRows(ctx, hook.webhookId)).every((r) => r.status === 'succeeded'));
    });

    test('redirect refused and never followed: 302 is WEBHOOK_REDIRECT_REFUSED with lastStatusCode, retried', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 302, location: receiver.url('hooks.localhost', '/elsewhere') }, { status: 307, location: '/elsewhere' });
      await worker(ctx).runOnce();
      let row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'pending');
      assert.equal(Number(row.last_status_code), 302);
      assert.equal(row.last_error_code, 'WEBHOOK_REDIRECT_REFUSED');
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(Number(row.last_status_code), 307);
      assert.equal(receiver.requests.length, 2);
      assert.ok(receiver.requests.every((r) => r.path === '/hooks'), 'the Location was never requested');
    });

    test('a long response body is ignored: the status decides (the body is drained up to 16 KiB, then the connection dropped)', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 200, body: 'x'.repeat(200_000) }, { status: 202, body: 'accepted' });
      assert.equal(await worker(ctx).runOnce(), 2);
      const rows = await deliveryRows(ctx, hook.webhookId);
      assert.deepEqual(rows.map((r) => r.status), ['succeeded', 'succeeded']);
      assert.deepEqual(rows.map((r) => Number(r.last_status_code)).sort(), [200, 202]);
    });

    test('timeout: an answer slower than WEBHOOK_TIMEOUT_MS is WEBHOOK_TIMEOUT and retried', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      // The answer never comes while the attempt runs (held until the test releases it): only the
      // 400 ms deadline of this worker can end the attempt.
      receiver.reply({ status: 200, hold: true });
      await worker(ctx, { timeoutMs: 400 }).runOnce();
      receiver.release();
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'pending');
      assert.equal(row.last_error_code, 'WEBHOOK_TIMEOUT');
      assert.equal(row.last_status_code, null);
    });

    test('max attempts: after WEBHOOK_MAX_ATTEMPTS failed attempts the delivery is failed, with growing backoff', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 }, { status: 500 }, { status: 500 }, { status: 500 }, { status: 500 });
      const waits: number[] = [];
      for (let i = 1; i <= 4; i++) {
        await worker(ctx).runOnce();
        const row = await onlyDelivery(ctx, hook.webhookId);
        assert.equal(Number(row.attempts), i);
        if (i < 4) {
          assert.equal(row.status, 'pending');
          waits.push(Number(row.next_attempt_at_ms) - ctx.clock.now());
          await advancePastNextAttempt(ctx, hook.webhookId);
        } else {
          assert.equal(row.status, 'failed');
          assert.equal(row.last_error_code, 'WEBHOOK_HTTP_ERROR');
        }
      }
      assert.ok(waits[0]! >= 1000 && waits[1]! >= 2000 && waits[2]! >= 4000 && waits[2]! <= 8000, `backoff ${waits.join(', ')}`);
      ctx.clock.advance(86_400_000);
      assert.equal(await worker(ctx).runOnce(), 0);
      assert.equal(receiver.requests.length, 4);
    });

    test('crash mid-delivery: the lease expires, another worker delivers the same event id; the lost worker is fenced', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const eventId = await emit(ctx, hook.tenant.workspace.id);
      const [lost] = await claimDeliveries(ctx.deps, 'crashed-worker', 10, 60_000);
      assert.ok(lost);
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'delivering');
      assert.equal(await worker(ctx).runOnce(), 0, 'a leased delivery is not taken while the lease holds');
      ctx.clock.advance(60_001);
      assert.equal(await worker(ctx).runOnce(), 1);
      assert.equal(receiver.requests.length, 1);
      assert.equal(receiver.requests[0]!.headers['service-event-id'], eventId);
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.attempts), 1, 'the lost attempt is not counted');
      // The crashed worker comes back with its outcome: its lease token is stale, nothing changes.
      assert.equal(await recordOutcome(ctx.deps, lost, { kind: 'failed', statusCode: 410, errorCode: 'WEBHOOK_HTTP_ERROR', sent: true }), undefined);
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'succeeded');
    });

    test('batched success write is fenced per row: a delivery whose lease token changed is left unchanged', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      for (let i = 0; i < 3; i++) await emit(ctx, hook.tenant.workspace.id);
      const claimed = await claimDeliveries(ctx.deps, 'batch-worker', 10, 60_000);
      assert.equal(claimed.length, 3);
      // Another worker took the third one over (recovery bumps the token).
      const [a, b, taken] = claimed as [ClaimedDelivery, ClaimedDelivery, ClaimedDelivery];
      await ctx.deps.db.updateTable('webhook_deliveries').set({ lease_token: taken.leaseToken + 1 }).where('id', '=', taken.id).execute();
      const held = await finishSucceeded(ctx.deps.db, [a, b, taken].map((d) => ({ id: d.id, leaseToken: d.leaseToken })), 204, ctx.clock.now());
      assert.deepEqual([...held].sort(), [a.id, b.id].sort());
      const rows = new Map((await deliveryRows(ctx, hook.webhookId)).map((r) => [r.id, r]));
      for (const d of [a, b]) {
        assert.equal(rows.get(d.id)!.status, 'succeeded');
        assert.equal(Number(rows.get(d.id)!.last_status_code), 204);
        assert.equal(Number(rows.get(d.id)!.attempts), 1);
      }
      assert.equal(rows.get(taken.id)!.status, 'delivering');
      assert.equal(Number(rows.get(taken.id)!.attempts), 0);
    });

    test('a claimed delivery that waited re-reads its webhook state before the send (verification removed meanwhile)', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      const [claimed] = await claimDeliveries(ctx.deps, 'queued-worker', 10, 60_000);
      assert.equal(claimed!.authorized, true);
      const removed = await admin(ctx, `/admin/v1/workspaces/${hook.tenant.workspace.id}/domains/${hook.hostname}/remove`, {});
      assert.equal(removed.statusCode, 200, removed.body);
      const fresh = await refreshWebhookState(ctx.deps, claimed!);
      assert.equal(fresh.authorized, false);
      assert.equal(fresh.leaseToken, claimed!.leaseToken);
      assert.equal(await recordOutcome(ctx.deps, fresh, { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_NOT_AUTHORIZED', sent: false }), 'failed');
      assert.equal(receiver.requests.length, 0);
    });

    test('several deliveries in flight at once: concurrent attempts, each delivered once', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const ids = new Set<string>();
      for (let i = 0; i < 6; i++) ids.add(await emit(ctx, hook.tenant.workspace.id));
      // Every answer is held until all six requests are at the receiver at once: attempts made one
      // after another could never get there (counted at the receiver, not by elapsed time).
      receiver.reply(...Array.from({ length: 6 }, () => ({ status: 200, hold: true })));
      const sending = worker(ctx).runOnce();
      await receiver.waitFor(6, 60_000);
      assert.equal(receiver.inFlight, 6, 'six attempts in flight at once');
      receiver.release();
      assert.equal(await sending, 6);
      assert.equal(receiver.peakInFlight, 6);
      assert.deepEqual(new Set(receiver.requests.map((r) => r.headers['service-event-id'])), ids);
      assert.equal(receiver.requests.length, 6);
    });

    test('running worker: a new event wakes it (no poll wait); stop() hands an unfinished attempt back to the queue', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const running = new DeliveryWorker(ctx.deps, { concurrency: 4, pollMs: 60_000 });
      const unsubscribe = onDeliveriesScheduled(() => running.notify());
      running.start();
      try {
        const eventId = await emit(ctx, hook.tenant.workspace.id);
        await receiver.waitFor(1, 60_000);
        assert.equal(receiver.requests[0]!.headers['service-event-id'], eventId);
        await waitUntil(() => onlyDelivery(ctx, hook.webhookId), (row) => row.status === 'succeeded', 'the delivery to succeed', 60_000, 20);
        // A receiver that has not answered: the attempt is still on the wire when the worker stops.
        receiver.reply({ status: 200, hold: true });
        const second = await emit(ctx, hook.tenant.workspace.id);
        await receiver.waitFor(2, 60_000);
        await running.stop(50);
        receiver.release();
        const row = (await deliveryRows(ctx, hook.webhookId)).find((r) => r.event_id === second)!;
        assert.equal(row.status, 'pending', 'given back, due at once');
        assert.equal(row.lease_owner, null);
        assert.equal(Number(row.attempts), 0);
      } finally {
        unsubscribe();
        await running.stop();
      }
      assert.equal(await worker(ctx).runOnce(), 1, 'another worker sends it');
    });
  },
  { env: WEBHOOK_TEST_ENV },
);
