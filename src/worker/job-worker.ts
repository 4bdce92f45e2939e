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

export interface JobWorkerOptions {
  concurrency?: number;
  pollMs?: number;
  recoveryMs?: number;
}

export class JobWorker {
  readonly owner = `${hostname()}:${process.pid}:${newId().slice(-8)}`;
  private readonly running = new Map<string, Promise<void>>();
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly recoveryMs: number;
  private timer: NodeJS.Timeout | undefined;
  private lastRecovery = 0;
  private stopped = true;
  private ticking = false;
  private wake: (() => void) | undefined;

  constructor(
    private readonly deps: Deps,
    options: JobWorkerOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 8;
    this.pollMs = options.pollMs ?? 250;
    this.recoveryMs = options.recoveryMs ?? Math.max(1000, Math.floor(deps.config.jobLeaseMs / 2));
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const loop = async () => {
      while (!this.stopped) {
        await this.tick().catch((err: unknown) => this.deps.log.error({ err }, 'worker tick failed'));
        await new Promise<void>((resolve) => {
          this.wake = resolve;
          this.timer = setTimeout(resolve, this.pollMs);
        });
      }
    };
    void loop();
  }

  /** Asks the loop to look for work now (new job admitted in this process). */
  notify(): void {
    this.wake?.();
  }

  /** Stops claiming; waits for running jobs up to `graceMs`, then aborts them (their leases expire). */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.wake?.();
    const all = Promise.allSettled([...this.running.values()]);
    await Promise.race([all, new Promise((r) => setTimeout(r, graceMs).unref())]);
    for (const c of this.controllers.values()) c.abort(new WorkerShutdown());
    await all;
  }

  private readonly controllers = new Map<string, AbortController>();

  private async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = this.deps.clock.now();
      if (now - this.lastRecovery >= this.recoveryMs) {
        this.lastRecovery = now;
        await recoverExpiredLeases(this.deps);
      }
      const free = this.concurrency - this.running.size;
      if (free <= 0 || this.stopped) return;
      for (const job of await claimJobs(this.deps, this.owner, free)) this.launch(job);
    } finally {
      this.ticking = false;
    }
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
        if (!this.stopped) this.notify();
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
