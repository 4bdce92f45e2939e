/**
 * The per-request series: http_requests_total, http_request_duration_seconds and
 * http_429_responses_total. They are counted in plain maps on the request path and turned into
 * Prometheus samples only when /metrics is scraped: prom-client's labelled Counter and Histogram
 * hash their label objects on every call, which cost a few microseconds per request.
 */
import type { Registry } from 'prom-client';
import { DURATION_BUCKETS_S } from './buckets.js';
import { customMetric, type MetricValue } from './custom-metric.js';
import type { LabelGuards } from './label-guard.js';
import type { Metrics } from './types.js';

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

/** The series of one method and route: a counter per status, one duration histogram. */
interface RouteSeries {
  statuses: Map<number, CounterSeries>;
  durations: HistogramSeries;
}

/** The samples of one duration histogram: cumulative buckets, +Inf, sum and count. */
function durationSamples(s: HistogramSeries): MetricValue[] {
  let cumulative = 0;
  const out: MetricValue[] = DURATION_BUCKETS_S.map((le, i) => {
    cumulative += s.buckets[i]!;
    return { labels: { ...s.labels, le }, value: cumulative, metricName: 'http_request_duration_seconds_bucket' };
  });
  out.push({ labels: { ...s.labels, le: '+Inf' }, value: s.count, metricName: 'http_request_duration_seconds_bucket' });
  out.push({ labels: s.labels, value: s.sum, metricName: 'http_request_duration_seconds_sum' });
  out.push({ labels: s.labels, value: s.count, metricName: 'http_request_duration_seconds_count' });
  return out;
}

function newRouteSeries(method: string, route: string): RouteSeries {
  return {
    statuses: new Map(),
    durations: { labels: { method, route }, buckets: new Array<number>(DURATION_BUCKETS_S.length).fill(0), sum: 0, count: 0 },
  };
}

export function registerRequestSeries(registry: Registry, guards: LabelGuards): Pick<Metrics, 'observeRequest' | 'observeTooManyRequests'> {
  // route → method → series: nested maps keyed by strings that are the same objects on every
  // request (route patterns, method names), so nothing is concatenated or hashed anew.
  const routes = new Map<string, Map<string, RouteSeries>>();
  const allSeries = () => [...routes.values()].flatMap((byMethod) => [...byMethod.values()]);
  // code → limit → count: the 429s (codes and limits are strings the code defines).
  const tooMany = new Map<string, Map<string, CounterSeries>>();

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
      () => allSeries().flatMap(({ durations }) => durationSamples(durations)),
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

  return {
    observeTooManyRequests(code, limit) {
      let byLimit = tooMany.get(code);
      if (!byLimit) tooMany.set(code, (byLimit = new Map()));
      const name = typeof limit === 'string' ? limit : 'none';
      const series = byLimit.get(name);
      if (series) series.value++;
      else byLimit.set(name, { labels: { code: guards.errorCode.value(code), limit: guards.limit.value(name) }, value: 1 });
    },
    observeRequest(method, route, status, seconds) {
      let byMethod = routes.get(route);
      if (!byMethod) routes.set(route, (byMethod = new Map()));
      let series = byMethod.get(method);
      if (!series) byMethod.set(method, (series = newRouteSeries(method, route)));
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
