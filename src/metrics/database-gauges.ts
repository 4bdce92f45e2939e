/**
 * The gauges read from the database and the pool when /metrics is scraped. They describe the
 * whole database (queues, backlog, reserved credits, housekeeping lag), so every process of a
 * deployment reports the same values. Their collection shares one read per scrape: the registry
 * asks every metric in the same turn, so the first asks for a read and the others join it. A read
 * that fails or takes longer than DATABASE_GAUGES_TIMEOUT_MS leaves these gauges out of that
 * scrape (no stale or made-up values) and sets metrics_database_up to 0, so /metrics still answers.
 */
import type { Registry } from 'prom-client';
import type { PoolStats } from '../db/connect.js';
import { customMetric, type MetricValue } from './custom-metric.js';
import { readDatabaseGauges, type DatabaseGauges } from './database-queries.js';
import type { LabelGuard } from './label-guard.js';
import type { MetricsSources } from './types.js';

/** How long a scrape waits for the database gauges before reporting them unavailable. */
export const DATABASE_GAUGES_TIMEOUT_MS = 2000;

const GLOBAL = 'Read from the database at scrape time: the same for every process of a deployment.';

const seconds = (ms: number) => Math.max(0, ms) / 1000;
const since = (at: number, ms: number | null) => (ms === null ? 0 : seconds(at - ms));

interface Read {
  at: number;
  gauges: DatabaseGauges | undefined;
}

/** One read of the gauges per scrape, joined by every metric that asks in the same turn. */
function sharedRead(sources: MetricsSources): () => Promise<Read> {
  let current: Promise<Read> | undefined;
  return () => {
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
}

interface QueueRow {
  waiting: number;
  running: number;
  oldestWaitingSince: number | null;
}

/** Every operation of the deployment (0 when idle) and any other that has jobs, by label value. */
function queueRows(g: DatabaseGauges, operations: readonly string[], operationGuard: LabelGuard): [string, QueueRow][] {
  const rows = new Map<string, QueueRow>();
  for (const op of operations) rows.set(operationGuard.value(op), { waiting: 0, running: 0, oldestWaitingSince: null });
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
}

export function registerDatabaseGauges(registry: Registry, sources: MetricsSources, operationGuard: LabelGuard): void {
  const read = sharedRead(sources);
  type Fill = (at: number, g: DatabaseGauges) => MetricValue[];
  const gauge = (name: string, help: string, fill: Fill) =>
    registry.registerMetric(
      customMetric(name, help, 'gauge', async () => {
        const r = await read();
        return r.gauges ? fill(r.at, r.gauges) : [];
      }),
    );
  const byOperation = (g: DatabaseGauges) => queueRows(g, sources.operations, operationGuard);

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
}

/** The database pool of this process, read at scrape time. */
export function registerPoolGauges(registry: Registry, sources: MetricsSources): void {
  const pool = (name: string, help: string, pick: (s: PoolStats) => number) =>
    registry.registerMetric(customMetric(name, help, 'gauge', () => [{ labels: {}, value: pick(sources.poolStats()) }]));
  pool('db_pool_connections_in_use', 'Database connections of this process checked out now (running a query or holding a transaction).', (s) => s.inUse);
  pool('db_pool_connections_max', 'Database connections this process may open (1 for embedded SQLite and PGlite, the pool size, 10, on PostgreSQL).', (s) => s.max);
  pool('db_pool_waiting_requests', 'Callers of this process waiting for a database connection.', (s) => s.waiting);
}
