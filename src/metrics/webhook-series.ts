/** The webhook series, counted by the delivery worker of this process (prom-client's own metrics). */
import { Counter, Histogram, type Registry } from 'prom-client';
import { DELIVERY_BUCKETS_S, DURATION_BUCKETS_S } from './buckets.js';
import type { LabelGuards } from './label-guard.js';
import type { Metrics } from './types.js';

export function registerWebhookSeries(registry: Registry, guards: LabelGuards): Pick<Metrics, 'observeWebhookAttempt' | 'observeWebhookDelivered' | 'observeWebhookGivenUp'> {
  const webhookAttempts = new Counter({
    name: 'webhook_delivery_attempts_total',
    help: 'Webhook delivery attempts handled by this process, by outcome (succeeded, retried, failed, lease_lost) and error_code (the delivery lastErrorCode; none on success).',
    labelNames: ['outcome', 'error_code'] as const,
    registers: [registry],
  });
  const webhookAttemptDuration = new Histogram({
    name: 'webhook_attempt_duration_seconds',
    help: 'Time this process took to send a webhook delivery attempt and read its answer.',
    buckets: [...DURATION_BUCKETS_S],
    registers: [registry],
  });
  const webhookLatency = new Histogram({
    name: 'webhook_delivery_latency_seconds',
    help: 'From an event’s creation to its successful delivery (retries included; replays are not counted), for deliveries this process made.',
    buckets: [...DELIVERY_BUCKETS_S],
    registers: [registry],
  });
  const webhookGivenUp = new Counter({
    name: 'webhook_deliveries_given_up_total',
    help: 'Deliveries this process ended as failed (a permanent refusal, or the last allowed attempt failed), by error_code.',
    labelNames: ['error_code'] as const,
    registers: [registry],
  });

  return {
    observeWebhookAttempt(outcome, errorCode, s) {
      webhookAttempts.inc({ outcome, error_code: guards.errorCode.value(errorCode) });
      webhookAttemptDuration.observe(s);
    },
    observeWebhookDelivered(s) {
      webhookLatency.observe(s);
    },
    observeWebhookGivenUp(errorCode) {
      webhookGivenUp.inc({ error_code: guards.errorCode.value(errorCode) });
    },
  };
}
