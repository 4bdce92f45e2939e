/**
 * Delivery history, replay and the re-checks at every send, against the real HTTPS receiver:
 * replay rules (same event id, replayCount, limit 3, only failed), secret rotation (the next
 * attempt is signed with the new secret only), revocation, a hostname whose verification is
 * removed or moved to another workspace, the deliveries list (paging, 404 across workspaces) and
 * secrets never appearing outside create and rotate.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { admin, call, describeEachDatabase, type TestContext } from '../support/harness.js';
import { assertError, assertOk } from '../support/assertions.js';
import { HttpsReceiver } from '../support/https-receiver.js';
import { seedTenant, type Tenant } from '../support/seed.js';
import { advancePastNextAttempt, createHook, verifySignature as verify, emit, onlyDelivery, verifyHostname, WEBHOOK_TEST_ENV, worker, type HookSetup } from '../support/webhooks.js';
import { checkRefusals } from '../support/openapi-responses.js';


const receiver = HttpsReceiver.forThisFile();

const as = (t: Tenant) => ({ secret: t.secret, workspaceId: t.workspace.id });

function replay(ctx: TestContext, hook: HookSetup, deliveryId: string, t: Tenant = hook.tenant) {
  return call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/deliveries/${deliveryId}/replay`, as(t));
}

function list(ctx: TestContext, hook: HookSetup, query?: Record<string, string>, t: Tenant = hook.tenant) {
  return call(ctx, 'GET', `/v1/webhooks/${hook.webhookId}/deliveries`, { ...as(t), ...(query ? { query } : {}) });
}

/** A delivery that failed for good on a 410. */
async function failedDelivery(ctx: TestContext, hook: HookSetup) {
  const eventId = await emit(ctx, hook.tenant.workspace.id);
  receiver.reply({ status: 410 });
  await worker(ctx).runOnce();
  const row = await onlyDelivery(ctx, hook.webhookId);
  assert.equal(row.status, 'failed');
  return { eventId, deliveryId: row.id };
}

describeEachDatabase(
  'webhook deliveries and replay',
  (get) => {
  // Every refusal is an answer /openapi.json documents for its route (openapi-responses.ts).
  before(() => checkRefusals(get().app));
    test('replay: same event id, replayCount + 1, pending, then sent promptly; a replay is one attempt', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const { eventId, deliveryId } = await failedDelivery(ctx, hook);
      const body = assertOk(await replay(ctx, hook, deliveryId));
      assert.equal(body.code, 'PUBLIC_WEBHOOKS_REPLAY');
      assert.deepEqual(Object.keys(body.data), ['delivery']);
      const d = body.data.delivery;
      assert.equal(d.id, deliveryId);
      assert.equal(d.eventId, eventId);
      assert.equal(d.replayCount, 1);
      assert.equal(d.status, 'pending');
      // A retryable failure of the replay ends it (one attempt): failed again, replayable again.
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      let row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(Number(row.attempts), 2);
      assertOk(await replay(ctx, hook, deliveryId));
      await worker(ctx).runOnce();
      row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'succeeded');
      assert.equal(Number(row.replay_count), 2);
      assert.equal(receiver.requests.length, 3);
      assert.ok(receiver.requests.every((r) => r.headers['service-event-id'] === eventId));
      assert.equal(new Set(receiver.requests.map((r) => r.body)).size, 1, 'the same event bytes every time');
      assertError(await replay(ctx, hook, deliveryId), 409, 'DELIVERY_NOT_FAILED');
    });

    test('replay limit: at most 3 replays per event (409 REPLAY_LIMIT_REACHED); a pending delivery is 409 DELIVERY_NOT_FAILED', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const { deliveryId } = await failedDelivery(ctx, hook);
      for (let i = 1; i <= 3; i++) {
        assert.equal(assertOk(await replay(ctx, hook, deliveryId)).data.delivery.replayCount, i);
        assertError(await replay(ctx, hook, deliveryId), 409, 'DELIVERY_NOT_FAILED');
        receiver.reply({ status: 410 });
        await worker(ctx).runOnce();
      }
      assertError(await replay(ctx, hook, deliveryId), 409, 'REPLAY_LIMIT_REACHED');
      assert.equal(Number((await onlyDelivery(ctx, hook.webhookId)).replay_count), 3);
      assert.equal(receiver.requests.length, 4);
    });

    test('replay: unknown delivery, another webhook or another workspace is 404; malformed ids are 400', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const { deliveryId } = await failedDelivery(ctx, hook);
      const other = await seedTenant(ctx.deps);
      assertError(await replay(ctx, hook, deliveryId, other), 404, 'NOT_FOUND');
      assertError(await replay(ctx, hook, '0190a000-0000-7000-8000-000000000000'), 404, 'NOT_FOUND');
      const sibling = await createHook(ctx, receiver, { tenant: hook.tenant });
      assertError(await replay(ctx, sibling, deliveryId), 404, 'NOT_FOUND');
      assertError(await replay(ctx, hook, 'not-a-uuid'), 400, 'INVALID_REQUEST');
    });

    test('rotation: the next attempt is signed with the new secret; the old one no longer verifies', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const eventId = await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      const first = receiver.requests[0]!;
      verify(ctx, first.body, String(first.headers['service-signature']), hook.secret);
      const rotated = assertOk(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/rotate`, as(hook.tenant)));
      const fresh = rotated.data.secret as string;
      assert.notEqual(fresh, hook.secret);
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      const second = receiver.requests[1]!;
      assert.equal(second.headers['service-event-id'], eventId);
      const header = String(second.headers['service-signature']);
      assert.equal(verify(ctx, second.body, header, fresh).id, eventId);
      assert.throws(() => verify(ctx, second.body, header, hook.secret), /signature/i);
    });

    test('revocation abandons pending deliveries (WEBHOOK_REVOKED), sends nothing more, and replay is 409 WEBHOOK_REVOKED', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'pending');
      assertOk(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/revoke`, as(hook.tenant)));
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error_code, 'WEBHOOK_REVOKED');
      ctx.clock.advance(86_400_000);
      await emit(ctx, hook.tenant.workspace.id);
      assert.equal(await worker(ctx).runOnce(), 0);
      assert.equal(receiver.requests.length, 1);
      assertError(await replay(ctx, hook, row.id), 409, 'WEBHOOK_REVOKED');
    });

    test('a disabled webhook: its pending delivery fails WEBHOOK_DISABLED unsent; replay waits for it to be enabled', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 503 });
      await worker(ctx).runOnce();
      assertOk(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/update`, { ...as(hook.tenant), body: { enabled: false } }));
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error_code, 'WEBHOOK_DISABLED');
      assert.equal(Number(row.attempts), 1, 'nothing was sent');
      assert.equal(receiver.requests.length, 1);
      assertError(await replay(ctx, hook, row.id), 409, 'WEBHOOK_DISABLED');
      assertOk(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/update`, { ...as(hook.tenant), body: { enabled: true } }));
      assertOk(await replay(ctx, hook, row.id));
      await worker(ctx).runOnce();
      assert.equal((await onlyDelivery(ctx, hook.webhookId)).status, 'succeeded');
    });

    test('verification removed mid-way: the next attempt fails WEBHOOK_NOT_AUTHORIZED and nothing is sent; replay is 400 WEBHOOK_URL_REJECTED', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      assertOk(await admin(ctx, `/admin/v1/workspaces/${hook.tenant.workspace.id}/domains/${hook.hostname}/remove`, {}));
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error_code, 'WEBHOOK_NOT_AUTHORIZED');
      assert.equal(receiver.requests.length, 1, 'nothing sent after the verification was removed');
      assertError(await replay(ctx, hook, row.id), 400, 'WEBHOOK_URL_REJECTED');
      await verifyHostname(ctx, hook.tenant.workspace.id, hook.hostname);
      assertOk(await replay(ctx, hook, row.id));
    });

    test('hostname moved to another workspace: the next attempt fails WEBHOOK_NOT_AUTHORIZED and nothing is sent', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      await emit(ctx, hook.tenant.workspace.id);
      receiver.reply({ status: 500 });
      await worker(ctx).runOnce();
      const other = await seedTenant(ctx.deps);
      await verifyHostname(ctx, other.workspace.id, hook.hostname);
      await advancePastNextAttempt(ctx, hook.webhookId);
      await worker(ctx).runOnce();
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error_code, 'WEBHOOK_NOT_AUTHORIZED');
      assert.equal(receiver.requests.length, 1);
      assertError(await replay(ctx, hook, row.id), 400, 'WEBHOOK_URL_REJECTED');
    });

    test('destination re-checked at send: a hostname now resolving to a refused address fails WEBHOOK_DESTINATION_REFUSED', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver, { hostname: 'hooks-b.localhost' });
      await emit(ctx, hook.tenant.workspace.id);
      // The same process, with the loopback exemption lifted: the guard refuses the address.
      const strict = { ...ctx.deps, config: { ...ctx.deps.config, egressAllowCidrs: [] } };
      const { createEgress } = await import('../../src/egress/client.js');
      const egress = createEgress({ allowCidrs: [] });
      try {
        const { DeliveryWorker } = await import('../../src/modules/webhooks/delivery-worker.js');
        await new DeliveryWorker({ ...strict, egress }).runOnce();
      } finally {
        await egress.close();
      }
      const row = await onlyDelivery(ctx, hook.webhookId);
      assert.equal(row.status, 'failed');
      assert.equal(row.last_error_code, 'WEBHOOK_DESTINATION_REFUSED');
      assert.equal(receiver.requests.length, 0);
      ctx.hostAddresses.set('hooks-b.localhost', ['10.0.0.1']);
      const res = assertError(await replay(ctx, hook, row.id), 400, 'WEBHOOK_URL_REJECTED');
      assert.equal(res.details?.reason, 'ADDRESS_NOT_PERMITTED');
      ctx.hostAddresses.set('hooks-b.localhost', ['127.0.0.1']);
    });

    test('deliveries list: newest first, limit/cursor paging with hasMore, only documented fields; another workspace is 404', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const events: string[] = [];
      for (let i = 0; i < 5; i++) {
        events.push(await emit(ctx, hook.tenant.workspace.id));
        ctx.clock.advance(1000);
      }
      await worker(ctx).runOnce();
      const seen: any[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const body = assertOk(await list(ctx, hook, { limit: '2', ...(cursor ? { cursor } : {}) }));
        assert.equal(body.code, 'PUBLIC_WEBHOOKS_DELIVERIES');
        assert.equal(body.data.hasMore, body.data.nextCursor !== null);
        seen.push(...body.data.items);
        cursor = body.data.nextCursor ?? undefined;
        pages++;
      } while (cursor);
      assert.equal(pages, 3);
      assert.deepEqual(seen.map((d) => d.eventId), [...events].reverse(), 'newest first');
      for (const d of seen) {
        assert.deepEqual(Object.keys(d).sort(), ['attempts', 'createdAt', 'deliveredAt', 'eventId', 'id', 'lastErrorCode', 'lastStatusCode', 'livemode', 'replayCount', 'status', 'webhookId'].sort());
        assert.equal(d.status, 'succeeded');
        assert.equal(d.webhookId, hook.webhookId);
        assert.equal(d.attempts, 1);
        assert.equal(d.lastStatusCode, 200);
        assert.match(d.deliveredAt, /Z$/);
      }
      const other = await seedTenant(ctx.deps);
      assertError(await list(ctx, hook, undefined, other), 404, 'NOT_FOUND');
      assertError(await list(ctx, hook, { cursor: 'forged.cursor' }), 400, 'INVALID_CURSOR');
      assertError(await list(ctx, hook, { limit: '0' }), 400, 'INVALID_REQUEST');
      // A cursor of one webhook's list is not valid for another's.
      const first = assertOk(await list(ctx, hook, { limit: '1' }));
      const sibling = await createHook(ctx, receiver, { tenant: hook.tenant });
      assertError(await list(ctx, sibling, { cursor: first.data.nextCursor }), 400, 'INVALID_CURSOR');
    });

    test('no secret in any response but create and rotate (list webhooks, deliveries, replay)', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const { deliveryId } = await failedDelivery(ctx, hook);
      const rotated = assertOk(await call(ctx, 'POST', `/v1/webhooks/${hook.webhookId}/rotate`, as(hook.tenant))).data.secret as string;
      const responses = [
        await call(ctx, 'GET', '/v1/webhooks', as(hook.tenant)),
        await list(ctx, hook),
        await replay(ctx, hook, deliveryId),
        await call(ctx, 'GET', '/v1/events', as(hook.tenant)),
      ];
      for (const res of responses) {
        assert.ok(res.statusCode < 500, res.body);
        for (const secret of [hook.secret, rotated]) assert.ok(!res.body.includes(secret), `${res.statusCode} ${res.body.slice(0, 80)} leaks a secret`);
        assert.ok(!res.body.includes('whsec_'), 'no secret-looking value');
      }
    });
  },
  { env: WEBHOOK_TEST_ENV },
);
