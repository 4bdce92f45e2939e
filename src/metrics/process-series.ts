/**
 * What this process is doing besides requests and jobs: its housekeeping passes (worker
 * processes) and the job streams and standing MCP streams it holds open, the latter read at
 * scrape time from the counts the stream hubs hand over.
 */
import { Counter, Gauge, type Registry } from 'prom-client';
import { customMetric } from './custom-metric.js';
import type { Metrics } from './types.js';

export function registerHousekeepingSeries(registry: Registry): Pick<Metrics, 'observeHousekeepingPass'> {
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
  return {
    observeHousekeepingPass(ok, finishedAtMs) {
      housekeepingPasses.inc({ outcome: ok ? 'ok' : 'error' });
      if (ok) housekeepingLastSuccess = finishedAtMs / 1000;
    },
  };
}

export function registerStreamGauges(registry: Registry): Pick<Metrics, 'trackOpenStreams' | 'trackOpenTaskStreams'> {
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
  return {
    trackOpenStreams(count) {
      openStreams = count;
    },
    trackOpenTaskStreams(count) {
      openTaskStreams = count;
    },
  };
}
