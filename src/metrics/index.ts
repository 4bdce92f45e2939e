/**
 * Prometheus metrics of one service instance (its own registry, so tests can build many apps).
 *
 * The metrics are built in parts named after what they count: the per-request series, counted in
 * plain maps and rendered at scrape time (request-series.ts); background work with prom-client's
 * own metrics, jobs and provider calls (job-series.ts), webhook attempts (webhook-series.ts),
 * housekeeping and open streams (process-series.ts); gauges that describe the database, read at
 * scrape time by one set of small indexed queries (database-gauges.ts, database-queries.ts) and
 * global. Every counter and histogram counts what THIS process did. A label fed from outside the
 * code is bounded by one LabelGuard per label, shared by every part (label-guard.ts).
 * docs/operations.md lists the metrics; listener.ts serves them on a port of their own.
 */
import { Registry, collectDefaultMetrics } from 'prom-client';
import { registerDatabaseGauges, registerPoolGauges } from './database-gauges.js';
import { registerBatchSeries, registerJobSeries } from './job-series.js';
import { createLabelGuards } from './label-guard.js';
import { registerHousekeepingSeries, registerStreamGauges } from './process-series.js';
import { registerRequestSeries } from './request-series.js';
import type { Metrics, MetricsSources } from './types.js';
import { registerWebhookSeries } from './webhook-series.js';

export { DELIVERY_BUCKETS_S, DURATION_BUCKETS_S, JOB_BUCKETS_S } from './buckets.js';
export { DATABASE_GAUGES_TIMEOUT_MS } from './database-gauges.js';
export { MAX_LABEL_VALUES } from './label-guard.js';
export type { JobOutcome, Metrics, MetricsSources, WebhookAttemptOutcome } from './types.js';

export function createMetrics(options: { processMetrics: boolean; sources?: MetricsSources }): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const guards = createLabelGuards();
  // Registration order is the order of /metrics.
  const requests = registerRequestSeries(registry, guards);
  const batches = registerBatchSeries(registry);
  const jobs = registerJobSeries(registry, guards);
  const webhooks = registerWebhookSeries(registry, guards);
  const housekeeping = registerHousekeepingSeries(registry);
  const streams = registerStreamGauges(registry);
  if (options.sources) {
    registerDatabaseGauges(registry, options.sources, guards.operation);
    registerPoolGauges(registry, options.sources);
  }
  return { registry, ...batches, ...requests, ...jobs, ...webhooks, ...housekeeping, ...streams };
}
