/**
 * verifyWebhook (packages/sdk): headers made by the `stripe` package's test helper (the
 * Service-Signature scheme is Stripe's: `t=…,v1=…`, HMAC-SHA256 over `t.body`, decisions.md) and
 * real deliveries of the service to an HTTPS receiver; refuses tampered bodies, wrong secrets,
 * stale and future timestamps and malformed headers; accepts any one valid of several v1 values.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import Stripe from 'stripe';
import { HttpsReceiver } from '../support/https-receiver.js';
import { createHook, emit, WEBHOOK_TEST_ENV, worker } from '../support/webhooks.js';
import { describeSdkDatabases } from '../support/sdk.js';
import { signWebhook, verifyWebhook, WebhookVerificationError, type WebhookVerificationReason } from '../../packages/sdk/src/index.js';

const stripe = new Stripe('sk_test_unused');
const SECRET = 'whsec_test_0123456789abcdef';
const body = JSON.stringify({ id: '019a0000-0000-7000-8000-000000000001', type: 'job.completed', workspaceId: '019a0000-0000-7000-8000-000000000002', createdAt: '2026-11-18T12:00:00.000Z', data: { job: { id: 'x', status: 'completed' } } });
const now = () => Math.floor(Date.now() / 1000);

async function refused(promise: Promise<unknown>, reason: WebhookVerificationReason): Promise<void> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof WebhookVerificationError, `expected a WebhookVerificationError, got ${String(err)}`);
  assert.equal(err.reason, reason);
}

test('verifyWebhook accepts headers made by stripe.webhooks.generateTestHeaderString, as a string or bytes', async () => {
  const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: now() });
  const event = await verifyWebhook(body, header, SECRET);
  assert.equal(event.type, 'job.completed');
  assert.equal((await verifyWebhook(new TextEncoder().encode(body), header, SECRET)).id, event.id);
  // And stripe verifies what signWebhook makes.
  const ours = await signWebhook(body, SECRET);
  assert.equal((stripe.webhooks.constructEvent(body, ours, SECRET) as unknown as { id: string }).id, event.id);
});

test('verifyWebhook refuses tampered bodies, wrong secrets, stale or future timestamps and malformed headers', async () => {
  const t = now();
  const header = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: t });
  await refused(verifyWebhook(body.replace('completed', 'failed'), header, SECRET), 'SIGNATURE_MISMATCH');
  await refused(verifyWebhook(`${body} `, header, SECRET), 'SIGNATURE_MISMATCH');
  await refused(verifyWebhook(body, header, 'whsec_wrong'), 'SIGNATURE_MISMATCH');
  // The tolerance is weighed at `t` itself: the clock's next second would take t + 301 within it.
  const stale = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: t - 301 });
  await refused(verifyWebhook(body, stale, SECRET, { nowSeconds: t }), 'TIMESTAMP_OUT_OF_TOLERANCE');
  const future = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: t + 301 });
  await refused(verifyWebhook(body, future, SECRET, { nowSeconds: t }), 'TIMESTAMP_OUT_OF_TOLERANCE');
  assert.ok(await verifyWebhook(body, stale, SECRET, { toleranceSeconds: 600, nowSeconds: t }), 'a wider tolerance accepts it');
  const edge = stripe.webhooks.generateTestHeaderString({ payload: body, secret: SECRET, timestamp: t - 300 });
  assert.ok(await verifyWebhook(body, edge, SECRET, { nowSeconds: t }), 'exactly the tolerance is accepted');
  await refused(verifyWebhook(body, undefined, SECRET), 'MISSING_SIGNATURE');
  await refused(verifyWebhook(body, '', SECRET), 'MISSING_SIGNATURE');
  await refused(verifyWebhook(body, 'v1=abc', SECRET), 'MALFORMED_SIGNATURE');
  await refused(verifyWebhook(body, `t=${t}`, SECRET), 'MALFORMED_SIGNATURE');
  await refused(verifyWebhook(body, `t=${t},v1=zz`, SECRET), 'SIGNATURE_MISMATCH');
  await refused(verifyWebhook(body, header.replace(/^t=\d+/, `t=${t + 1}`), SECRET), 'SIGNATURE_MISMATCH');
  await refused(verifyWebhook('not json', await signWebhook('not json', SECRET), SECRET), 'INVALID_BODY');
});

test('verifyWebhook accepts a header with several v1 signatures when one matches (rotation)', async () => {
  const t = now();
  const good = (await signWebhook(body, SECRET, t)).split('v1=')[1]!;
  const other = (await signWebhook(body, 'whsec_previous', t)).split('v1=')[1]!;
  assert.ok(await verifyWebhook(body, `t=${t},v1=${other},v1=${good}`, SECRET));
  assert.ok(await verifyWebhook(body, `t=${t},v0=ignored,v1=${good},v1=${other}`, SECRET));
  await refused(verifyWebhook(body, `t=${t},v1=${other},v1=${other}`, SECRET), 'SIGNATURE_MISMATCH');
});

const receiver = HttpsReceiver.forThisFile();

describeSdkDatabases(
  'verifyWebhook on real deliveries of the service',
  (get) => {
    test('a delivery to an HTTPS receiver verifies with the webhook secret and parses to the event; tampering or another secret does not', async () => {
      const ctx = get();
      receiver.reset();
      const hook = await createHook(ctx, receiver);
      const eventId = await emit(ctx, hook.tenant.workspace.id, 'job.completed');
      assert.equal(await worker(ctx).runOnce(), 1);
      const req = receiver.requests.at(-1)!;
      const header = String(req.headers['service-signature']);
      const nowSeconds = Math.floor(ctx.clock.now() / 1000);
      const event = await verifyWebhook(req.body, header, hook.secret, { nowSeconds });
      assert.equal(event.id, eventId);
      assert.equal(event.id, req.headers['service-event-id']);
      assert.equal(event.workspaceId, hook.tenant.workspace.id);
      await refused(verifyWebhook(req.body.replace('job.completed', 'job.failed'), header, hook.secret, { nowSeconds }), 'SIGNATURE_MISMATCH');
      await refused(verifyWebhook(req.body, header, 'whsec_other', { nowSeconds }), 'SIGNATURE_MISMATCH');
      await refused(verifyWebhook(req.body, header, hook.secret, { nowSeconds: nowSeconds + 301 }), 'TIMESTAMP_OUT_OF_TOLERANCE');
    });
  },
  { env: WEBHOOK_TEST_ENV },
);
