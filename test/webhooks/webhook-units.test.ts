/** Pure parts of webhook delivery: the backoff schedule, the signature, the body and the request options. */
import { testScopeOf } from '../../src/lib/livemode.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import Stripe from 'stripe';
import { retryDelayMs } from '../../src/modules/webhooks/backoff.js';
import { attemptRequestOptions, outcomeOfError, outcomeOfStatus } from '../../src/modules/webhooks/delivery-attempt.js';
import { deliveryHeaders, eventBody, signatureHeader, WEBHOOK_USER_AGENT } from '../../src/modules/webhooks/signing.js';
import { EgressError } from '../../src/egress/types.js';
import { loadConfig } from '../../src/config.js';
import type { Deps } from '../../src/deps.js';

const DEFAULTS = { baseMs: 30_000, capMs: 3_600_000 };

test('backoff: exponential from the base, doubling per failed attempt, jitter of at most 20 % upward below the cap', () => {
  assert.equal(retryDelayMs(1, DEFAULTS, () => 0), 30_000);
  assert.equal(retryDelayMs(2, DEFAULTS, () => 0), 60_000);
  assert.equal(retryDelayMs(3, DEFAULTS, () => 0), 120_000);
  assert.equal(retryDelayMs(1, DEFAULTS, () => 0.999999), 36_000);
  assert.equal(retryDelayMs(1, DEFAULTS, () => 0.5), 33_000);
});

test('backoff: capped at WEBHOOK_RETRY_CAP_MS (jitter downward there), never above it, also for huge attempt counts', () => {
  assert.equal(retryDelayMs(8, DEFAULTS, () => 0), 3_600_000);
  assert.equal(retryDelayMs(8, DEFAULTS, () => 0.5), 3_240_000);
  assert.equal(retryDelayMs(1_000, DEFAULTS, () => 0), 3_600_000);
  assert.equal(retryDelayMs(1, { baseMs: 3_500_000, capMs: 3_600_000 }, () => 0.99), 3_600_000, 'jitter never pushes past the cap');
  assert.equal(retryDelayMs(7, DEFAULTS, () => 0), 1_920_000);
});

test('backoff: property: within [min(cap, base·2^(n-1))·0.8, cap], at least the base, non-decreasing lower bound', () => {
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 200 }), fc.integer({ min: 1, max: 40 }), fc.double({ min: 0, max: 0.9999, noNaN: true }), (base, factor, n, r) => {
      const cap = base * factor;
      const d = retryDelayMs(n, { baseMs: base, capMs: cap }, () => r);
      const exp = Math.min(cap, base * 2 ** (n - 1));
      assert.ok(d <= cap, `${d} > cap ${cap}`);
      assert.ok(d >= Math.floor(exp * 0.8) - 1, `${d} < 0.8 × ${exp}`);
      assert.ok(d >= Math.min(base, Math.floor(cap * 0.8)) - 1);
      assert.ok(Number.isInteger(d) && d >= 1);
    }),
  );
});

test('signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret as UTF-8, "t.body")>, verified by the stripe package', () => {
  const secret = 'whsec_test-secret';
  const body = '{"id":"e"}';
  const header = signatureHeader(secret, body, 1_700_000_000.9);
  const expected = createHmac('sha256', Buffer.from(secret, 'utf8')).update(`1700000000.${body}`).digest('hex');
  assert.equal(header, `t=1700000000,v1=${expected}`);
  const stripe = new Stripe('sk_test_unused');
  assert.deepEqual(stripe.webhooks.constructEvent(body, header, secret, 300, undefined, 1_700_000_100_000), { id: 'e' });
  assert.throws(() => stripe.webhooks.constructEvent(body, header, secret, 300, undefined, 1_700_000_301_000), /tolerance/i);
});

test('request headers: JSON, the service User-Agent, Service-Event-Id and a signature at the given time', () => {
  const h = deliveryHeaders('whsec_x', 'evt', '{}', 1_700_000_000_500);
  assert.equal(h['content-type'], 'application/json');
  assert.equal(h['user-agent'], WEBHOOK_USER_AGENT);
  assert.match(WEBHOOK_USER_AGENT, /^WorkspaceAutomationService-Webhooks\//);
  assert.equal(h['service-event-id'], 'evt');
  assert.match(h['service-signature']!, /^t=1700000000,v1=[0-9a-f]{64}$/);
});

test('body: exactly JSON.stringify of the feed event {id, type, workspaceId, createdAt, data}', () => {
  const data = { job: { id: 'j', status: 'completed', output: { text: 'é "quoted" \u2028' }, n: 1.5, list: [1, null] } };
  const body = eventBody({ id: 'e1', type: 'job.completed', workspaceId: 'w1', createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 6), dataJson: JSON.stringify(data) });
  assert.equal(body, JSON.stringify({ id: 'e1', type: 'job.completed', workspaceId: 'w1', livemode: true, createdAt: '2026-01-02T03:04:05.006Z', data }));
});

test('body of a test-mode event: the workspace id the client knows and livemode false (docs/decisions.md "Test mode")', () => {
  const live = '01a22683-5e0d-75ca-9cd7-4920c9e8a4af';
  const body = eventBody({ id: 'e2', type: 'job.failed', workspaceId: testScopeOf(live), createdAtMs: Date.UTC(2026, 0, 2, 3, 4, 5, 6), dataJson: '{}' });
  assert.equal(body, JSON.stringify({ id: 'e2', type: 'job.failed', workspaceId: live, livemode: false, createdAt: '2026-01-02T03:04:05.006Z', data: {} }));
});

test('request options: POST, no redirects, the 10 s default deadline (WEBHOOK_TIMEOUT_MS), a small drained response', () => {
  const config = loadConfig({ SECRET_KEY: 'x'.repeat(32), DATA_DIR: '/tmp/unused' });
  assert.equal(config.webhookTimeoutMs, 10_000);
  const o = attemptRequestOptions({ config } as Deps, { a: 'b' }, '{}');
  assert.equal(o.method, 'POST');
  assert.equal(o.maxRedirects, 0);
  assert.equal(o.timeoutMs, 10_000);
  assert.equal(o.discardBody, true);
  assert.ok(o.maxBytes <= 64 * 1024);
});

test('outcomes: 2xx succeed; 400/401/403/404/410 fail; 3xx redirect refused and retried; others retried; egress errors mapped', () => {
  for (const s of [200, 201, 204, 299]) assert.equal(outcomeOfStatus(s).kind, 'succeeded');
  for (const s of [400, 401, 403, 404, 410]) assert.deepEqual(outcomeOfStatus(s), { kind: 'failed', statusCode: s, errorCode: 'WEBHOOK_HTTP_ERROR', sent: true });
  for (const s of [301, 302, 303, 307, 308]) assert.deepEqual(outcomeOfStatus(s), { kind: 'retry', statusCode: s, errorCode: 'WEBHOOK_REDIRECT_REFUSED', sent: true });
  for (const s of [100, 402, 405, 408, 409, 429, 500, 502, 503, 504]) assert.equal(outcomeOfStatus(s).kind, 'retry', `${s}`);
  assert.deepEqual(outcomeOfError(new EgressError('EGRESS_TIMEOUT', 'x')), { kind: 'retry', statusCode: null, errorCode: 'WEBHOOK_TIMEOUT', sent: true });
  assert.deepEqual(outcomeOfError(new EgressError('EGRESS_NETWORK', 'x')), { kind: 'retry', statusCode: null, errorCode: 'WEBHOOK_NETWORK_ERROR', sent: true });
  assert.deepEqual(outcomeOfError(new EgressError('EGRESS_DNS', 'x')), { kind: 'retry', statusCode: null, errorCode: 'WEBHOOK_NETWORK_ERROR', sent: true });
  assert.deepEqual(outcomeOfError(new EgressError('EGRESS_BLOCKED', 'x')), { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_DESTINATION_REFUSED', sent: true });
});
