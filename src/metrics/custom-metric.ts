/**
 * A metric whose samples are computed when /metrics is scraped, in the shape prom-client's
 * Registry renders: the request series (counted in plain maps) and the scrape-time gauges.
 */
import type { Metric } from 'prom-client';

export interface MetricValue {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A metric object in the shape prom-client's Registry renders (what its own metrics' get() returns). */
export function customMetric(
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
