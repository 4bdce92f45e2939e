/**
 * Prometheus metrics of one service instance (its own registry, so tests can build many apps).
 *
 * The per-request series (http_requests_total, http_request_duration_seconds) are counted in
 * plain maps on the request path and turned into Prometheus samples only when /metrics is
 * scraped: prom-client's labelled Counter and Histogram hash their label objects on every call,
 * which cost a few microseconds per request. Other metrics can be added to `registry` as usual.
 */
import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';

export const DURATION_BUCKETS_S = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10] as const;

export interface Metrics {
  registry: Registry;
  /** Counts one answered request: method, route pattern ('unmatched' for 404s), status, seconds. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
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

export function createMetrics(options: { processMetrics: boolean }): Metrics {
  const registry = new Registry();
  if (options.processMetrics) collectDefaultMetrics({ register: registry });
  const requests = new Map<string, CounterSeries>();
  const durations = new Map<string, HistogramSeries>();

  registry.registerMetric(
    customMetric(
      'http_requests_total',
      'HTTP requests answered, by route pattern and status.',
      'counter',
      () => [...requests.values()].map((s) => ({ labels: s.labels, value: s.value })),
      () => requests.clear(),
    ),
  );
  registry.registerMetric(
    customMetric(
      'http_request_duration_seconds',
      'Time to answer HTTP requests, by route pattern.',
      'histogram',
      () =>
        [...durations.values()].flatMap((s) => {
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
      () => durations.clear(),
    ),
  );

  return {
    registry,
    observeRequest(method, route, status, seconds) {
      const key = `${method} ${route}`;
      const counterKey = `${key} ${status}`;
      const counter = requests.get(counterKey);
      if (counter) counter.value++;
      else requests.set(counterKey, { labels: { method, route, status: String(status) }, value: 1 });
      let series = durations.get(key);
      if (!series) {
        series = { labels: { method, route }, buckets: new Array<number>(DURATION_BUCKETS_S.length).fill(0), sum: 0, count: 0 };
        durations.set(key, series);
      }
      let i = 0;
      while (i < DURATION_BUCKETS_S.length && seconds > DURATION_BUCKETS_S[i]!) i++;
      if (i < DURATION_BUCKETS_S.length) series.buckets[i]!++;
      series.sum += seconds;
      series.count++;
    },
  };
}
