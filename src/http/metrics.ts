/**
 * Prometheus metrics of one service instance (its own registry, so tests can build many apps).
 *
 * The per-request series (http_requests_total, http_request_duration_seconds,
 * http_429_responses_total) are counted in plain maps on the request path and turned into
 * Prometheus samples only when /metrics is scraped: prom-client's labelled Counter and Histogram
 * hash their label objects on every call, which cost a few microseconds per request. Series of
 * background work (jobs, provider calls, webhook attempts, housekeeping) use prom-client's own
 * metrics. Gauges that describe the database (queues, backlog, reserved credits, housekeeping
 * lag) are read at scrape time by one set of small indexed queries (metrics-database.ts) and are
 * global; every counter and histogram counts what THIS process did. docs/operations.md lists them.
 *
 * Label values are bounded: ids, workspaces and URLs are never labels, and a label that could
 * take values from outside the code (an errorCode a provider adapter invents, a provider's name
 * in the providers file) is limited to MAX_LABEL_VALUES distinct values per label, later ones
 * being counted as `other`.
 */
import type { Kysely } from 'kysely';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { PoolStats } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';
import { readDatabaseGauges, type DatabaseGauges } from './metrics-database.js';

export const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;
/** Jobs and provider calls: from a fast synchronous run to an hour-long video. */
export const JOB_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600] as const;
/** From an event's creation to its delivery: retries back off for hours (webhook backoff cap). */
export const DELIVERY_BUCKETS_S = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14_400, 86_400] as const;
/** Distinct values a label fed from outside the code may take; later ones are counted as `other`. */
export const MAX_LABEL_VALUES = 64;
/** How long a scrape waits for the database gauges before reporting them unavailable. */
export const DATABASE_GAUGES_TIMEOUT_MS = 2000;

/** A job's terminal status as counted (cancelled jobs have no errorCode; `none` stands for it). */
export type JobOutcome = 'completed' | 'failed' | 'cancelled';
/** What became of a webhook delivery attempt: recorded as succeeded, to be retried, failed for good, or its lease was lost. */
export type WebhookAttemptOutcome = 'succeeded' | 'retried' | 'failed' | 'lease_lost';

export interface Metrics {
  registry: Registry;
  /** Counts one answered request: method, route pattern ('unmatched' for 404s), status, seconds. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Counts one 429 answer by its error code and `details.limit` (request path: plain maps). */
  observeTooManyRequests(code: string, limit: unknown): void;
  /**
   * Counts one batch of admissions or job finishes (runs/admission-batch.ts,
   * jobs/finish-batch.ts): its size, and whether it fell back to one-by-one processing.
   */
  observeBatch(kind: 'admission' | 'finish', items: number, fellBack: boolean): void;
  /** A job reached a terminal status in this process (worker, synchronous run, cancel, recovery). */
  observeJobFinished(operation: string, provider: string, status: JobOutcome, errorCode: string | null): void;
  /** One attempt of a job ran to its finish in this process: how long it ran. */
  observeJobAttempt(operation: string, provider: string, status: 'completed' | 'failed', errorCode: string | null, seconds: number): void;
  /** One call of a provider adapter (one attempt's work, its own HTTP retries and polling included). */
  observeProviderCall(provider: string, operation: string, errorCode: string | null, seconds: number): void;
  /** One webhook delivery attempt handled by this process's delivery worker. */
  observeWebhookAttempt(outcome: WebhookAttemptOutcome, errorCode: string | null, seconds: number): void;
  /** A delivery succeeded: seconds from its event's creation. */
  observeWebhookDelivered(secondsSinceEvent: number): void;
  /** A delivery ended failed (permanent refusal, or its attempts ran out). */
  observeWebhookGivenUp(errorCode: string): void;
  /** A housekeeping pass of this process ended. */
  observeHousekeepingPass(ok: boolean, finishedAtMs: number): void;
  /** The number of job streams this process holds open (read at scrape time). */
  trackOpenStreams(count: () => number): void;
  /** The number of standing MCP streams (GET /mcp) this process holds open (read at scrape time). */
  trackOpenTaskStreams(count: () => number): void;
}

/** What the scrape-time gauges read: the database, its pool and the clock. */
export interface MetricsSources {
  db: Kysely<Database>;
  clock: Clock;
  poolStats(): PoolStats;
  /** The operations to report queue gauges for even when they have no jobs (0). */
  operations: readonly string[];
  /** Logs a failed read of the database gauges (the scrape still answers). */
  onDatabaseError(err: unknown): void;
}

interface CounterSeries {
  labels: Record<string, string>;
  value: number;
}

interface HistogramSeries {
  labels: Record<string, string>;
  /** Non-cumulative counts per bucket of DURATION_BUCKETS_S (the last slot is +Inf). */
  buckets: number[];
  sum: number;
  count: number;
}

interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric object in the shape prom-client's Registry renders (what its own metrics' get() returns). */
function customMetric(
  name: string,
  help: string,
  type: 'counter' | 'gauge' | 'histogram',
  values: () => MetricValue[] | Promise<MetricValue[]>,
  reset: () => void = () => {},
): Metric {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: await values() }),
    reset,
  } as unknown as Metric;
}

/** The series of one method and route: a counter per status, one duration histogram. */
interface RouteSeries {
  statuses: Map<number, CounterSeries>;
  durations: HistogramSeries;
}

const LABEL_VALUE = /^[A-Za-z0-9_.:-]{1,64}$/;

/**
 * Keeps a label's values few: a value must look like a code or name, and only the first
 * MAX_LABEL_VALUES distinct values of the label are kept as they are.
 */
class LabelGuard {
  private readonly seen = new Set<string>();
  value(v: string | null | undefined, absent = 'none'): string {
    if (v === null || v === undefined || v === '') return absent;
    if (this.seen.has(v)) return v;
    if (!LABEL_VALUE.test(v) || this.seen.size >= MAX_LABEL_VALUES) return 'other';
    this.seen.add(v);
    return v;
  }
}

const seconds = (ms: number) => Math.max(0, ms) / 1000;

export function createMetrics(options: { processMetrics: boolean; sources?: MetricsSources }): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  // route → method → series: nested maps keyed by strings that are the same objects on every
  // request (route patterns, method names), so nothing is concatenated or hashed anew.
  const routes = new Map<string, Map<string, RouteSeries>>();
  const allSeries = () => [...routes.values()].flatMap((byMethod) => [...byMethod.values()]);
  // code → limit → count: the 429s (codes and limits are strings the code defines).
  const tooMany = new Map<string, Map<string, CounterSeries>>();
  const guards = { operation: new LabelGuard(), provider: new LabelGuard(), errorCode: new LabelGuard(), limit: new LabelGuard() };

  registry.registerMetric(
    customMetric(
      'http_requests_total',
      'HTTP requests answered, by route pattern and status.',
      'counter',
      () => allSeries().flatMap((r) => [...r.statuses.values()].map((s) => ({ labels: s.labels, value: s.value }))),
      () => routes.clear(),
    ),
  );
  registry.registerMetric(
    customMetric(
      'http_request_duration_seconds',
      'Time to answer HTTP requests, by route pattern.',
      'histogram',
      () =>
        allSeries().flatMap(({ durations: s }) => {
          let cumulative = 0;
          const out: MetricValue[] = DURATION_BUCKETS_S.map((le, i) => {
            cumulative += s.buckets[i]!;
            return { labels: { ...s.labels, le }, value: cumulative, metricName: 'http_request_duration_seconds_bucket' };
          });
          out.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: 'http_request_duration_seconds_bucket' });
          out.push({ labels: s.labels, value: s.sum, metricName: 'http_request_duration_seconds_sum' });
          out.push({ labels: s.labels, value: s.count, metricName: 'http_request_duration_seconds_count' });
          return out;
        }),
      () => routes.clear(),
    ),
  );
  registry.registerMetric(
    customMetric(
      'http_429_responses_total',
      'Requests answered 429 by this process, by error code (RATE_LIMITED, BUDGET_EXCEEDED, QUEUE_FULL, CONCURRENCY_LIMITED) and details.limit (none when the answer has no limit).',
      'counter',
      () => [...tooMany.values()].flatMap((byLimit) => [...byLimit.values()].map((s) => ({ labels: s.labels, value: s.value }))),
      () => tooMany.clear(),
    ),
  );

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

  // Jobs and providers (counted by the process that did the work).
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

  // Webhooks (counted by the delivery worker of this process).
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

  // Housekeeping (worker processes).
  const housekeepingPasses = new Counter({
    name: 'housekeeping_passes_total',
    help: 'Housekeeping passes run by this process, by outcome (ok, error).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  let housekeepingLastSuccess: number | undefined;
  registry.registerMetric(
    customMetric(
      'housekeeping_last_success_timestamp_seconds',
      'When the last successful housekeeping pass of this process ended (unix seconds); absent before the first one and in processes without housekeeping (ROLE=api).',
      'gauge',
      () => (housekeepingLastSuccess === undefined ? [] : [{ labels: {}, value: housekeepingLastSuccess }]),
    ),
  );

  // Job streams and the database pool (this process).
  let openStreams: () => number = () => 0;
  new Gauge({
    name: 'job_streams_open',
    help: 'Job streams (server-sent events) this process holds open.',
    registers: [registry],
    collect() {
      this.set(openStreams());
    },
  });
  let openTaskStreams: () => number = () => 0;
  new Gauge({
    name: 'mcp_task_streams_open',
    help: 'Standing MCP streams (GET /mcp, task status notifications) this process holds open; STREAMS_PER_PROCESS caps them apart from job streams.',
    registers: [registry],
    collect() {
      this.set(openTaskStreams());
    },
  });

  if (options.sources) registerDatabaseGauges(registry, options.sources, guards.operation);

  return {
    registry,
    observeBatch(kind, items, fellBack) {
      const labels = { kind, outcome: fellBack ? 'fallback' : 'batched' };
      batches.inc(labels);
      batchedItems.inc(labels, items);
    },
    observeTooManyRequests(code, limit) {
      let byLimit = tooMany.get(code);
      if (!byLimit) tooMany.set(code, (byLimit = new Map()));
      const name = typeof limit === 'string' ? limit : 'none';
      const series = byLimit.get(name);
      if (series) series.value++;
      else byLimit.set(name, { labels: { code: guards.errorCode.value(code), limit: guards.limit.value(name) }, value: 1 });
    },
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
    observeHousekeepingPass(ok, finishedAtMs) {
      housekeepingPasses.inc({ outcome: ok ? 'ok' : 'error' });
      if (ok) housekeepingLastSuccess = finishedAtMs / 1000;
    },
    trackOpenStreams(count) {
      openStreams = count;
    },
    trackOpenTaskStreams(count) {
      openTaskStreams = count;
    },
    observeRequest(method, route, status, seconds) {
      let byMethod = routes.get(route);
      if (!byMethod) routes.set(route, (byMethod = new Map()));
      let series = byMethod.get(method);
      if (!series) {
        series = {
          statuses: new Map(),
          durations: { labels: { method, route }, buckets: new Array<number>(DURATION_BUCKETS_S.length).fill(0), sum: 0, count: 0 },
        };
        byMethod.set(method, series);
      }
      const counter = series.statuses.get(status);
      if (counter) counter.value++;
      else series.statuses.set(status, { labels: { method, route, status: String(status) }, value: 1 });
      const h = series.durations;
      let i = 0;
      while (i < DURATION_BUCKETS_S.length && seconds > DURATION_BUCKETS_S[i]!) i++;
      if (i < DURATION_BUCKETS_S.length) h.buckets[i]!++;
      h.sum += seconds;
      h.count++;
    },
  };
}

const GLOBAL = 'Read from the database at scrape time: the same for every process of a deployment.';

/**
 * The gauges read from the database and the pool when /metrics is scraped. Their collection
 * shares one read per scrape: the registry asks every metric in the same turn, so the first asks
 * for a read and the others join it. A read that fails or takes longer than
 * DATABASE_GAUGES_TIMEOUT_MS leaves these gauges out of that scrape (no stale or made-up values)
 * and sets metrics_database_up to 0, so /metrics still answers.
 */
function registerDatabaseGauges(registry: Registry, sources: MetricsSources, operationGuard: LabelGuard): void {
  let current: Promise<{ at: number; gauges: DatabaseGauges | undefined }> | undefined;
  const read = () => {
    if (current) return current;
    current = (async () => {
      const at = sources.clock.now();
      let timer: NodeJS.Timeout | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`database gauges: no answer within ${DATABASE_GAUGES_TIMEOUT_MS} ms`)), DATABASE_GAUGES_TIMEOUT_MS);
        });
        return { at, gauges: await Promise.race([readDatabaseGauges(sources.db, at), timeout]) };
      } catch (err) {
        sources.onDatabaseError(err);
        return { at, gauges: undefined };
      } finally {
        clearTimeout(timer);
      }
    })();
    // Joined only by the metrics of this scrape, which all ask in the current turn.
    queueMicrotask(() => (current = undefined));
    return current;
  };

  type Fill = (at: number, g: DatabaseGauges) => MetricValue[];
  const gauge = (name: string, help: string, fill: Fill) =>
    registry.registerMetric(
      customMetric(name, help, 'gauge', async () => {
        const r = await read();
        return r.gauges ? fill(r.at, r.gauges) : [];
      }),
    );
  const since = (at: number, ms: number | null) => (ms === null ? 0 : seconds(at - ms));

  /** Every operation of the deployment (0 when idle) and any other that has jobs, by label value. */
  const byOperation = (g: DatabaseGauges) => {
    const rows = new Map<string, { waiting: number; running: number; oldestWaitingSince: number | null }>();
    for (const op of sources.operations) rows.set(operationGuard.value(op), { waiting: 0, running: 0, oldestWaitingSince: null });
    for (const r of g.jobs) {
      const label = operationGuard.value(r.operation);
      const row = rows.get(label);
      if (!row) {
        rows.set(label, { waiting: r.waiting, running: r.running, oldestWaitingSince: r.oldestWaitingSince });
        continue;
      }
      // Several operations can share the `other` label: their jobs add up, the oldest counts.
      row.waiting += r.waiting;
      row.running += r.running;
      if (r.oldestWaitingSince !== null && (row.oldestWaitingSince === null || r.oldestWaitingSince < row.oldestWaitingSince)) row.oldestWaitingSince = r.oldestWaitingSince;
    }
    return [...rows];
  };
  gauge('jobs_waiting', `Jobs waiting to run (pending), by operation. ${GLOBAL}`, (_, g) => byOperation(g).map(([operation, r]) => ({ labels: { operation }, value: r.waiting })));
  gauge('jobs_running', `Jobs running (processing), by operation. ${GLOBAL}`, (_, g) => byOperation(g).map(([operation, r]) => ({ labels: { operation }, value: r.running })));
  gauge(
    'jobs_oldest_waiting_age_seconds',
    `Seconds the oldest waiting job of each operation has been claimable (since it was admitted, retried or returned to the queue); 0 without waiting jobs. ${GLOBAL}`,
    (at, g) => byOperation(g).map(([operation, r]) => ({ labels: { operation }, value: since(at, r.oldestWaitingSince) })),
  );
  gauge(
    'webhook_deliveries_backlog',
    `Webhook deliveries not finished, by status (pending: waiting for their first attempt or a retry; delivering: leased by a worker). ${GLOBAL}`,
    (_, g) => [
      { labels: { status: 'pending' }, value: g.deliveries.pending },
      { labels: { status: 'delivering' }, value: g.deliveries.delivering },
    ],
  );
  gauge('webhook_oldest_due_delivery_age_seconds', `Seconds the oldest due webhook delivery has waited for its attempt; 0 when none is due. ${GLOBAL}`, (at, g) => [
    { labels: {}, value: since(at, g.deliveries.oldestDueSince) },
  ]);
  gauge(
    'credits_reserved_millicents',
    `Credits held by open reservations (the maximum cost of jobs not finished yet), in millicents, all workspaces together. ${GLOBAL}`,
    (_, g) => [{ labels: {}, value: g.holds.reservedMillicents }],
  );
  gauge('credit_holds_open', `Open credit reservations (one per job not finished yet). ${GLOBAL}`, (_, g) => [{ labels: {}, value: g.holds.open }]);
  gauge(
    'housekeeping_lag_seconds',
    `How overdue the oldest item of each housekeeping task is (credit_expiry: a credit allocation past its expiry not settled yet; idempotency_purge: an idempotency record past its 24 hours); 0 when nothing is overdue. ${GLOBAL}`,
    (at, g) => [
      { labels: { task: 'credit_expiry' }, value: since(at, g.housekeeping.creditExpiry) },
      { labels: { task: 'idempotency_purge' }, value: since(at, g.housekeeping.idempotencyPurge) },
    ],
  );
  registry.registerMetric(
    customMetric('metrics_database_up', 'Whether this scrape could read the database gauges (1) or not (0: they are left out of the scrape and the error is logged).', 'gauge', async () => [
      { labels: {}, value: (await read()).gauges ? 1 : 0 },
    ]),
  );

  // The pool of this process.
  const pool = (name: string, help: string, pick: (s: PoolStats) => number) =>
    registry.registerMetric(customMetric(name, help, 'gauge', () => [{ labels: {}, value: pick(sources.poolStats()) }]));
  pool('db_pool_connections_in_use', 'Database connections of this process checked out now (running a query or holding a transaction).', (s) => s.inUse);
  pool('db_pool_connections_max', 'Database connections this process may open (1 for embedded SQLite and PGlite, the pool size, 10, on PostgreSQL).', (s) => s.max);
  pool('db_pool_waiting_requests', 'Callers of this process waiting for a database connection.', (s) => s.waiting);
}
