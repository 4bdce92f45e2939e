/**
 * Shared set-up of the webhook delivery tests: a tenant whose `*.localhost` hostname is verified by
 * the operator (admin API), a webhook created through POST /v1/webhooks pointing at the HTTPS
 * receiver, events stored through the outbox (which fans them out), and row reads.
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { admin, call, type TestContext } from './harness.js';
import { seedTenant, type Tenant } from './seed.js';
import type { HttpsReceiver } from './https-receiver.js';
import { insertEvent, type EventType } from '../../src/modules/events/store.js';
import { DeliveryWorker } from '../../src/modules/webhooks/delivery-worker.js';

const stripe = new Stripe('sk_test_unused');

/**
 * Verifies a delivery like a receiver using the `stripe` package would (same signature scheme,
 * five-minute tolerance), with the fake clock as the receiver's clock; returns the parsed event.
 */
export function verifySignature(ctx: TestContext, body: string, header: string, secret: string): Record<string, unknown> {
  return stripe.webhooks.constructEvent(body, header, secret, 300, undefined, ctx.clock.now()) as unknown as Record<string, unknown>;
}

/**
 * Short schedules for tests: 1 s base, 8 s cap, 4 attempts; loopback allowed. The attempt deadline
 * stays the 10 s default, which a TLS handshake on a loaded machine meets; only the timeout test
 * uses a short one (`worker(ctx, { timeoutMs })`).
 */
export const WEBHOOK_TEST_ENV = {
  EGRESS_ALLOW_CIDRS: '127.0.0.1/32,::1/128',
  WEBHOOK_RETRY_BASE_MS: '1000',
  WEBHOOK_RETRY_CAP_MS: '8000',
  WEBHOOK_MAX_ATTEMPTS: '4',
  WEBHOOK_TIMEOUT_MS: '10000',
};

export interface HookSetup {
  tenant: Tenant;
  webhookId: string;
  secret: string;
  hostname: string;
}

/** Adds `hostname` to the workspace and verifies it by the operator's word (moving it here). */
export async function verifyHostname(ctx: TestContext, workspaceId: string, hostname: string): Promise<void> {
  ctx.hostAddresses.set(hostname, ['127.0.0.1']);
  const added = await admin(ctx, `/admin/v1/workspaces/${workspaceId}/domains`, { hostname });
  assert.equal(added.statusCode, 200, added.body);
  const verified = await admin(ctx, `/admin/v1/workspaces/${workspaceId}/domains/${hostname}/verify`, { method: 'operator' });
  assert.equal(verified.statusCode, 200, verified.body);
}

export async function createHook(
  ctx: TestContext,
  receiver: HttpsReceiver,
  options: { tenant?: Tenant; hostname?: string; eventTypes?: EventType[]; path?: string } = {},
): Promise<HookSetup> {
  const tenant = options.tenant ?? (await seedTenant(ctx.deps));
  const hostname = options.hostname ?? 'hooks.localhost';
  await verifyHostname(ctx, tenant.workspace.id, hostname);
  const res = await call(ctx, 'POST', '/v1/webhooks', {
    secret: tenant.secret,
    workspaceId: tenant.workspace.id,
    body: { url: receiver.url(hostname, options.path), eventTypes: options.eventTypes ?? ['job.completed', 'job.failed'], enabled: true },
  });
  assert.equal(res.statusCode, 200, res.body);
  const data = res.json().data;
  return { tenant, webhookId: data.webhook.id, secret: data.secret, hostname };
}

/** Stores an event the way the services do (in a transaction, with its fan-out); returns its id. */
export async function emit(ctx: TestContext, workspaceId: string, type: EventType = 'job.completed', data?: Record<string, unknown>): Promise<string> {
  const event = await ctx.deps.db.transaction().execute((trx) =>
    insertEvent(trx, workspaceId, type, data ?? { job: { id: randomUUID(), status: type === 'job.failed' ? 'failed' : 'completed' } }, ctx.clock.now()),
  );
  return event.id;
}

export async function deliveryRows(ctx: TestContext, webhookId: string) {
  return ctx.deps.db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).orderBy('id').execute();
}

export async function onlyDelivery(ctx: TestContext, webhookId: string) {
  const rows = await deliveryRows(ctx, webhookId);
  assert.equal(rows.length, 1, `expected one delivery, found ${rows.length}`);
  return rows[0]!;
}

/** A delivery worker; `timeoutMs` gives its attempts another deadline than WEBHOOK_TIMEOUT_MS. */
export function worker(ctx: TestContext, o: { timeoutMs?: number } = {}): DeliveryWorker {
  const deps = o.timeoutMs === undefined ? ctx.deps : { ...ctx.deps, config: { ...ctx.deps.config, webhookTimeoutMs: o.timeoutMs } };
  return new DeliveryWorker(deps, { concurrency: 8 });
}

/** Moves the fake clock past the delivery's next attempt time. */
export async function advancePastNextAttempt(ctx: TestContext, webhookId: string): Promise<void> {
  const row = await onlyDelivery(ctx, webhookId);
  const wait = Number(row.next_attempt_at_ms) - ctx.clock.now();
  if (wait >= 0) ctx.clock.advance(wait + 1);
}
