/**
 * The series of background work counted by the process that did it, with prom-client's own
 * metrics: batched admissions and finishes, jobs reaching a terminal status, job attempts and
 * provider calls.
 */
import { Counter, Histogram, type Registry } from 'prom-client';
import { JOB_BUCKETS_S } from './buckets.js';
import type { LabelGuards } from './label-guard.js';
import type { Metrics } from './types.js';

export function registerBatchSeries(registry: Registry): Pick<Metrics, 'observeBatch'> {
  const batches = new Counter({
    name: 'batches_total',
    help: 'Batched admissions and job finishes (PostgreSQL), by kind and outcome (batched, or fell back to one by one).',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  const batchedItems = new Counter({
    name: 'batched_items_total',
    help: 'Runs admitted and jobs finished through batches, by kind and outcome.',
    labelNames: ['kind', 'outcome'] as const,
    registers: [registry],
  });
  return {
    observeBatch(kind, items, fellBack) {
      const labels = { kind, outcome: fellBack ? 'fallback' : 'batched' };
      batches.inc(labels);
      batchedItems.inc(labels, items);
    },
  };
}

export function registerJobSeries(registry: Registry, guards: LabelGuards): Pick<Metrics, 'observeJobFinished' | 'observeJobAttempt' | 'observeProviderCall'> {
  const jobsFinished = new Counter({
    name: 'jobs_finished_total',
    help: 'Jobs that reached a terminal status in this process, by operation, provider, status (completed, failed, cancelled) and error_code (the job errorCode; none unless failed).',
    labelNames: ['operation', 'provider', 'status', 'error_code'] as const,
    registers: [registry],
  });
  const jobAttempts = new Histogram({
    name: 'job_attempt_duration_seconds',
    help: 'How long job attempts run in this process, from the start of the attempt to its recorded finish, by operation, provider, status (completed, failed) and error_code.',
    labelNames: ['operation', 'provider', 'status', 'error_code'] as const,
    buckets: [...JOB_BUCKETS_S],
    registers: [registry],
  });
  const providerCalls = new Counter({
    name: 'provider_calls_total',
    help: "Calls of a provider adapter made by this process (one per job attempt, the adapter's own HTTP retries and polling included), by provider, operation and outcome (ok, error).",
    labelNames: ['provider', 'operation', 'outcome'] as const,
    registers: [registry],
  });
  const providerErrors = new Counter({
    name: 'provider_errors_total',
    help: 'Provider calls of this process that ended in an error, by provider, operation and error_code (the job errorCode it gives).',
    labelNames: ['provider', 'operation', 'error_code'] as const,
    registers: [registry],
  });
  const providerLatency = new Histogram({
    name: 'provider_call_duration_seconds',
    help: 'Duration of provider calls made by this process, by provider and operation.',
    labelNames: ['provider', 'operation'] as const,
    buckets: [...JOB_BUCKETS_S],
    registers: [registry],
  });

  return {
    observeJobFinished(operation, provider, status, errorCode) {
      jobsFinished.inc({ operation: guards.operation.value(operation), provider: guards.provider.value(provider), status, error_code: guards.errorCode.value(errorCode) });
    },
    observeJobAttempt(operation, provider, status, errorCode, s) {
      jobAttempts.observe({ operation: guards.operation.value(operation), provider: guards.provider.value(provider), status, error_code: guards.errorCode.value(errorCode) }, s);
    },
    observeProviderCall(provider, operation, errorCode, s) {
      const labels = { provider: guards.provider.value(provider), operation: guards.operation.value(operation) };
      providerCalls.inc({ ...labels, outcome: errorCode === null ? 'ok' : 'error' });
      if (errorCode !== null) providerErrors.inc({ ...labels, error_code: guards.errorCode.value(errorCode) });
      providerLatency.observe(labels, s);
    },
  };
}
