/**
 * Starts the background workers of a process with a worker role (ROLE worker or all), each on
 * the shared poll loop (lib/poll-loop.ts):
 * - the job worker claims queued jobs; a job admitted in this process wakes it at once
 *   (`deps.jobsWakeup`), one admitted by another process through the jobs_pending signal on a
 *   shared PostgreSQL server (modules/jobs/pending-signal.ts: sent by processes without a worker,
 *   and by a process whose own worker has no free slot), and its poll finds the rest;
 * - the webhook delivery worker sends deliveries; those scheduled or replayed in this process
 *   wake it, those of other processes it finds by polling;
 * - housekeeping (maintenance.ts) expires credits, purges what is past its time and raises the
 *   alerts that come with time.
 * The returned stop function stops them all, each after its own grace for work in progress.
 */
import type { Deps } from '../deps.js';
import { DeliveryWorker } from '../modules/webhooks/delivery-worker.js';
import { onDeliveriesScheduled } from '../modules/webhooks/fan-out.js';
import { JobWorker } from './job-worker.js';
import { startMaintenance } from './maintenance.js';

/** `options` are for tests: a job worker's poll interval and concurrency other than the configuration's. */
export function startWorkers(deps: Deps, options: { jobPollMs?: number; jobConcurrency?: number } = {}): () => Promise<void> {
  const jobs = new JobWorker(deps, { concurrency: options.jobConcurrency ?? deps.config.jobConcurrency, ...(options.jobPollMs !== undefined ? { pollMs: options.jobPollMs } : {}) });
  jobs.start();
  // A job admitted here goes to this process's own worker; the others are told only when it has
  // no free slot (a signal per admission cost the single-process path a third of its rate).
  deps.jobsWakeup = () => {
    jobs.notify();
    if (jobs.saturated) deps.jobsPending.announce();
  };
  const stopListening = deps.jobsPending.listen(() => jobs.notify());
  const deliveries = new DeliveryWorker(deps);
  deliveries.start();
  const unsubscribe = onDeliveriesScheduled(() => deliveries.notify());
  const stopMaintenance = startMaintenance(deps);
  return async () => {
    deps.jobsWakeup = () => deps.jobsPending.announce();
    unsubscribe();
    await Promise.all([stopListening(), jobs.stop(), deliveries.stop(), stopMaintenance()]);
  };
}
