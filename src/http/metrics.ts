/**
 * Prometheus metrics of one service instance (its own registry, so tests can build many apps).
 *
 * The per-request series (http_requests_total, http_request_duration_seconds) are counted in
 * plain maps on the request path and turned into Prometheus samples only when /metrics is
 * scraped: prom-client's labelled Counter and Histogram hash their label objects on every call,
 * which cost a few microseconds per request. Other metrics can be added to `registry` as usual.
 */
import { Counter, Registry, collectDefaultMetrics, type Metric } from 'prom-client';

export const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

export interface Metrics {
  registry: Registry;
  /** Counts one answered request: method, route pattern ('unmatched' for 404s), status, seconds. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /**
   * Counts one batch of admissions or job finishes (runs/admission-batch.ts,
   * jobs/finish-batch.ts): its size, and whether it fell back to one-by-one processing.
   */
  observeBatch(kind: 'admission' | 'finish', items: number, fellBack: boolean): void;
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
function customMetric(name: string, help: string, type: 'counter' | 'histogram', values: () => MetricValue[], reset: () => void): Metric {
  return {
    name,
    help,
    type,
    aggregator: 'sum',
    get: async () => ({ name, help, type, aggregator: 'sum', values: values() }),
    reset,
  } as unknown as Metric;
}

/** The series of one method and route: a counter per status, one duration histogram. */
interface RouteSeries {
  statuses: Map<number, CounterSeries>;
  durations: HistogramSeries;
}

export function createMetrics(options: { processMetrics: boolean }): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  // route → method → series: nested maps keyed by strings that are the same objects on every
  // request (route patterns, method names), so nothing is concatenated or hashed anew.
  const routes = new Map<string, Map<string, RouteSeries>>();
  const allSeries = () => [...routes.values()].flatMap((byMethod) => [...byMethod.values()]);

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
    registry,
    observeBatch(kind, items, fellBack) {
      const labels = { kind, outcome: fellBack ? 'fallback' : 'batched' };
      batches.inc(labels);
      batchedItems.inc(labels, items);
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
