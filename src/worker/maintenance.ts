/**
 * Periodic housekeeping run by worker processes (ROLE worker or all): expiring credit
 * allocations that became due (except what open holds admitted before the expiry still need;
 * that part expires when those holds settle: billing/expiry.ts), deleting idempotency records
 * past their 24 h, stream slots whose process stopped heartbeating, allocation.expiring and
 * key.expiring alerts 7 days ahead (modules/alerts), and events older than
 * EVENT_RETENTION_DAYS with their finished deliveries (events/retention.ts). Each pass is idempotent and
 * safe to run in several processes at once (the expiry itself is one transaction per workspace,
 * under its lock, that re-reads what is due).
 */
import type { Deps } from '../deps.js';
import { PollLoop } from '../lib/poll-loop.js';
import { sweepExpirations } from '../modules/billing/service.js';
import { purgeExpired as purgeExpiredIdempotencyKeys } from '../modules/idempotency/service.js';
import { deleteAllExpiredSlots } from '../modules/jobs/stream-store.js';
import { deleteExpiredSlots as deleteExpiredMcpStreamSlots } from '../mcp/task-stream-store.js';
import { purgeExpiredEvents } from '../modules/events/retention.js';
import { raiseExpiryNotices } from '../modules/alerts/service.js';

export const MAINTENANCE_INTERVAL_MS = 60_000;
const SWEEP_BATCH = 100;
const PURGE_BATCH = 500;
/** Upper bound on batches per pass, so one pass never runs unbounded. */
const MAX_BATCHES_PER_PASS = 50;

/** One maintenance pass; returns how many workspaces had expirations settled. Counted in /metrics (housekeeping_*). */
export async function runMaintenanceOnce(deps: Deps, shouldStop: () => boolean = () => false): Promise<number> {
  try {
    const settled = await maintenancePass(deps, shouldStop);
    deps.metrics.observeHousekeepingPass(true, deps.clock.now());
    return settled;
  } catch (err) {
    deps.metrics.observeHousekeepingPass(false, deps.clock.now());
    throw err;
  }
}

async function maintenancePass(deps: Deps, shouldStop: () => boolean): Promise<number> {
  let settled = 0;
  for (let i = 0; i < MAX_BATCHES_PER_PASS && !shouldStop(); i++) {
    const n = await sweepExpirations(deps, SWEEP_BATCH);
    settled += n;
    if (n < SWEEP_BATCH) break;
  }
  if (!shouldStop()) {
    await purgeExpiredIdempotencyKeys(deps);
    await deleteAllExpiredSlots(deps.db, deps.clock.now());
    await deleteExpiredMcpStreamSlots(deps.db, deps.clock.now());
    await raiseExpiryNotices(deps);
  }
  for (let i = 0; i < MAX_BATCHES_PER_PASS && !shouldStop(); i++) {
    if ((await purgeExpiredEvents(deps, PURGE_BATCH)) < PURGE_BATCH) break;
  }
  return settled;
}

/** Starts the periodic pass (on the workers' poll loop); the returned stop function waits for a pass in progress. */
export function startMaintenance(deps: Deps, intervalMs = MAINTENANCE_INTERVAL_MS): () => Promise<void> {
  let stopping = false;
  const loop = new PollLoop({
    name: 'maintenance',
    pollMs: intervalMs,
    log: deps.log,
    round: async () => {
      const settled = await runMaintenanceOnce(deps, () => stopping);
      if (settled > 0) deps.log.info({ settled }, 'credit expirations settled');
    },
  });
  loop.start();
  return async () => {
    stopping = true;
    await loop.stop();
  };
}
