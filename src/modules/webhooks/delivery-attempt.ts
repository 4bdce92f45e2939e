/**
 * One delivery attempt: the checks that are re-done at every attempt, the signed POST through the
 * egress guard, and the recorded outcome.
 *
 * Before sending (nothing is sent, no attempt is counted when one fails; the delivery fails at
 * once): the webhook is revoked → WEBHOOK_REVOKED; disabled → WEBHOOK_DISABLED (pausing would
 * keep an unbounded backlog for an endpoint its owner turned off; a replay after re-enabling
 * sends it); its hostname is no longer verified in the delivery's workspace (removed, or moved to
 * another workspace) → WEBHOOK_NOT_AUTHORIZED.
 *
 * Sending goes through deps.egress (the one guard: every connection pinned to an address checked
 * by the address policy when it was opened; kept-alive connections are reused), no redirects, a
 * per-attempt deadline (WEBHOOK_TIMEOUT_MS, 10 s), the response body drained and ignored.
 * Outcomes: 2xx → succeeded; 400/401/403/404/410 → failed (WEBHOOK_HTTP_ERROR); 3xx → failure
 * WEBHOOK_REDIRECT_REFUSED (never followed, retried); other statuses → WEBHOOK_HTTP_ERROR, retried;
 * deadline → WEBHOOK_TIMEOUT; network or DNS failure → WEBHOOK_NETWORK_ERROR (both retried); a
 * destination the guard refuses → WEBHOOK_DESTINATION_REFUSED (failed). Retries follow
 * backoff.ts until WEBHOOK_MAX_ATTEMPTS attempts; a replay is a single attempt.
 */
import type { Deps } from '../../deps.js';
import { EgressError } from '../../egress/types.js';
import { FAILING_STREAK, raiseWebhookFailing, utcDay } from '../notifications/service.js';
import { retryDelayMs } from './backoff.js';
import type { ClaimedDelivery } from './delivery-claim.js';
import { finishAttempt } from './delivery-store.js';
import { deliveryHeaders, eventBody } from './signing.js';

/** Response bytes read (and dropped) to keep the connection reusable; longer answers close it. */
const RESPONSE_DRAIN_BYTES = 16 * 1024;
const PERMANENT_STATUSES = new Set([400, 401, 403, 404, 410]);
/** Failures that say the destination is not taking deliveries (notification-worthy). */
const DESTINATION_FAILURES = new Set([
  'WEBHOOK_HTTP_ERROR',
  'WEBHOOK_REDIRECT_REFUSED',
  'WEBHOOK_TIMEOUT',
  'WEBHOOK_NETWORK_ERROR',
  'WEBHOOK_DESTINATION_REFUSED',
  'WEBHOOK_NOT_AUTHORIZED',
]);

export type AttemptOutcome =
  | { kind: 'succeeded'; statusCode: number }
  | { kind: 'failed' | 'retry'; statusCode: number | null; errorCode: string; sent: boolean };

/** Classifies an HTTP status of a delivery attempt. */
export function outcomeOfStatus(status: number): AttemptOutcome {
  if (status >= 200 && status < 300) return { kind: 'succeeded', statusCode: status };
  if (status >= 300 && status < 400) return { kind: 'retry', statusCode: status, errorCode: 'WEBHOOK_REDIRECT_REFUSED', sent: true };
  if (PERMANENT_STATUSES.has(status)) return { kind: 'failed', statusCode: status, errorCode: 'WEBHOOK_HTTP_ERROR', sent: true };
  return { kind: 'retry', statusCode: status, errorCode: 'WEBHOOK_HTTP_ERROR', sent: true };
}

/** Classifies an egress failure of a delivery attempt. */
export function outcomeOfError(err: EgressError): AttemptOutcome {
  switch (err.code) {
    case 'EGRESS_BLOCKED':
    case 'EGRESS_BAD_URL':
      return { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_DESTINATION_REFUSED', sent: true };
    case 'EGRESS_TIMEOUT':
      return { kind: 'retry', statusCode: null, errorCode: 'WEBHOOK_TIMEOUT', sent: true };
    default:
      return { kind: 'retry', statusCode: null, errorCode: 'WEBHOOK_NETWORK_ERROR', sent: true };
  }
}

/** The egress options of every attempt (exported for the unit test of the 10 s default). */
export function attemptRequestOptions(deps: Deps, headers: Record<string, string>, body: string, signal?: AbortSignal) {
  return {
    method: 'POST' as const,
    headers,
    body,
    maxRedirects: 0,
    timeoutMs: deps.config.webhookTimeoutMs,
    maxBytes: RESPONSE_DRAIN_BYTES,
    discardBody: true,
    ...(signal ? { signal } : {}),
  };
}

function precheck(d: ClaimedDelivery): AttemptOutcome | undefined {
  if (d.webhook.revoked) return { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_REVOKED', sent: false };
  if (!d.webhook.enabled) return { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_DISABLED', sent: false };
  if (!d.authorized || d.event.workspaceId !== d.workspaceId) return { kind: 'failed', statusCode: null, errorCode: 'WEBHOOK_NOT_AUTHORIZED', sent: false };
  return undefined;
}

/** Sends one attempt; resolves with its outcome. A caller abort (shutdown) rejects with the reason. */
export async function sendAttempt(deps: Deps, d: ClaimedDelivery, secret: () => string, signal?: AbortSignal): Promise<AttemptOutcome> {
  const refused = precheck(d);
  if (refused) return refused;
  const body = eventBody({ id: d.eventId, type: d.event.type, workspaceId: d.event.workspaceId, createdAtMs: d.event.createdAtMs, dataJson: d.event.dataJson });
  const headers = deliveryHeaders(secret(), d.eventId, body, deps.clock.now());
  try {
    const res = await deps.egress.request(d.webhook.url, attemptRequestOptions(deps, headers, body, signal));
    return outcomeOfStatus(res.status);
  } catch (err) {
    if (err instanceof EgressError) return outcomeOfError(err);
    throw err;
  }
}

/** Remembers (per process) which webhooks already raised today's notification, to skip the insert. */
const notified = new Set<string>();

/** Writes the outcome under the lease; returns the new status, undefined when the lease was lost. */
export async function recordOutcome(deps: Deps, d: ClaimedDelivery, outcome: AttemptOutcome): Promise<'succeeded' | 'failed' | 'pending' | undefined> {
  const now = deps.clock.now();
  const attempts = d.attempts + (outcome.kind !== 'succeeded' && !outcome.sent ? 0 : 1);
  if (outcome.kind === 'succeeded') {
    const held = await finishAttempt(deps.db, d.id, d.leaseToken, {
      status: 'succeeded',
      attempts,
      last_status_code: outcome.statusCode,
      last_error_code: null,
      delivered_at_ms: now,
      updated_at_ms: now,
    });
    return held ? 'succeeded' : undefined;
  }
  const exhausted = d.replayCount > 0 || attempts >= deps.config.webhookMaxAttempts;
  const final = outcome.kind === 'failed' || exhausted;
  const patch = {
    status: final ? ('failed' as const) : ('pending' as const),
    attempts,
    last_status_code: outcome.statusCode,
    last_error_code: outcome.errorCode,
    updated_at_ms: now,
    ...(final ? {} : { next_attempt_at_ms: now + retryDelayMs(attempts, { baseMs: deps.config.webhookRetryBaseMs, capMs: deps.config.webhookRetryCapMs }) }),
  };
  const log = { deliveryId: d.id, webhookId: d.webhookId, workspaceId: d.workspaceId, attempts, errorCode: outcome.errorCode, statusCode: outcome.statusCode };
  const notify = DESTINATION_FAILURES.has(outcome.errorCode) && (final || attempts >= FAILING_STREAK) && !notified.has(`${d.webhookId}:${utcDay(now)}`);
  if (!notify) {
    const held = await finishAttempt(deps.db, d.id, d.leaseToken, patch);
    if (!held) return undefined;
    deps.log.warn(log, final ? 'webhook delivery failed' : 'webhook delivery attempt failed; will retry');
    return patch.status;
  }
  const held = await deps.db.transaction().execute(async (trx) => {
    if (!(await finishAttempt(trx, d.id, d.leaseToken, patch))) return false;
    await raiseWebhookFailing(
      trx,
      { workspaceId: d.workspaceId, webhookId: d.webhookId, hostname: d.webhook.hostname, deliveryId: d.id, eventId: d.eventId, attempts, lastErrorCode: outcome.errorCode, lastStatusCode: outcome.statusCode, final },
      now,
    );
    return true;
  });
  if (!held) return undefined;
  if (notified.size > 10_000) notified.clear();
  notified.add(`${d.webhookId}:${utcDay(now)}`);
  deps.log.warn(log, final ? 'webhook delivery failed' : 'webhook delivery attempt failed; will retry');
  return patch.status;
}
