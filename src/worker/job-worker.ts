/**
 * The job worker of one process: claims pending jobs up to its concurrency, runs each with a
 * heartbeat that extends the lease (and aborts the attempt when the lease is lost, e.g. on
 * cancel), and periodically recovers jobs of dead workers. `runOnce()` lets tests drive it.
 */
import { hostname } from 'node:os';
import type { Deps } from '../deps.js';
import { newId } from '../lib/ids.js';
import { executeJob } from '../modules/jobs/executor.js';
import type { JobRow } from '../modules/jobs/store.js';
import { claimJobs, heartbeat } from './job-claim.js';
import { WorkerShutdown } from '../providers/types.js';
import { recoverExpiredLeases } from './job-recovery.js';
import { PollLoop } from '../lib/poll-loop.js';

export interface JobWorkerOptions {
  concurrency?: number;
  pollMs?: number;
  recoveryMs?: number;
}

export class JobWorker {
  readonly owner = `${hostname()}:${process.pid}:${newId().slice(-8)}`;
  private readonly running = new Map<string, Promise<void>>();
  private readonly concurrency: number;
  private readonly recoveryMs: number;
  private readonly loop: PollLoop;
  private lastRecovery = 0;

  constructor(
    private readonly deps: Deps,
    options: JobWorkerOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.recoveryMs = options.recoveryMs ?? Math.max(1000, Math.floor(deps.config.jobLeaseMs / 2));
    this.loop = new PollLoop({ name: 'job worker', pollMs: options.pollMs ?? 250, log: deps.log, round: () => this.tick() });
  }

  start(): void {
    this.loop.start();
  }

  /** Whether every slot runs a job: a job admitted now would wait for another worker. */
  get saturated(): boolean {
    return this.running.size >= this.concurrency;
  }

  /** Asks the loop to look for work now (new job admitted in this process). */
  notify(): void {
    this.loop.notify();
  }

  /** Stops claiming; waits for running jobs up to `graceMs`, then aborts them (their leases expire). */
  async stop(graceMs = 10_000): Promise<void> {
    await this.loop.stop();
    const all = Promise.allSettled([...this.running.values()]);
    await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
    for (const c of this.controllers.values()) c.abort(new WorkerShutdown());
    await all;
  }

  private readonly controllers = new Map<string, AbortController>();

  private async tick(): Promise<void> {
    const now = this.deps.clock.now();
    if (now - this.lastRecovery >= this.recoveryMs) {
      this.lastRecovery = now;
      await recoverExpiredLeases(this.deps);
    }
    const free = this.concurrency - this.running.size;
    if (free <= 0 || !this.loop.running) return;
    for (const job of await claimJobs(this.deps, this.owner, free)) this.launch(job);
  }

  private launch(job: JobRow): void {
    const controller = new AbortController();
    this.controllers.set(job.id, controller);
    const beat = setInterval(() => {
      heartbeat(this.deps, job).then(
        (held) => {
          if (!held) controller.abort();
        },
        (err: unknown) => this.deps.log.error({ err, jobId: job.id }, 'heartbeat failed'),
      );
    }, Math.max(200, Math.floor(this.deps.config.jobLeaseMs / 3)));
    const run = executeJob(this.deps, job, controller.signal)
      .then(() => undefined)
      .catch((err: unknown) => this.deps.log.error({ err, jobId: job.id }, 'job attempt crashed'))
      .finally(() => {
        clearInterval(beat);
        this.running.delete(job.id);
        this.controllers.delete(job.id);
        if (this.loop.running) this.notify();
      });
    this.running.set(job.id, run);
  }

  /** Test driver: recovers, claims and runs jobs until none is claimable; returns how many ran. */
  async runOnce(): Promise<number> {
    let total = 0;
    await recoverExpiredLeases(this.deps);
    for (;;) {
      const jobs = await claimJobs(this.deps, this.owner, this.concurrency);
      if (jobs.length === 0) break;
      total += jobs.length;
      await Promise.all(jobs.map((job) => executeJob(this.deps, job, new AbortController().signal)));
    }
    return total;
  }
}
