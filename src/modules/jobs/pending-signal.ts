/**
 * "A job is waiting": the wake-up that lets a worker claim a job admitted in another process at
 * once instead of at its next poll (issue 38, item 4; the poll is 250 ms, so a job admitted by an
 * API process waited 125 ms on average before a ROLE=worker process looked).
 *
 * - One process owns the database (embedded SQLite, PGlite): there is no other process to tell;
 *   the admitting process wakes its own worker directly (deps.jobsWakeup).
 * - Several processes share a PostgreSQL server: after a job became claimable a process without a
 *   worker (ROLE=api), or one whose own worker has no free slot (worker/runner.ts), sends
 *   `NOTIFY jobs_pending` (no payload), and every worker process LISTENs on that channel. The
 *   signal is sent after the admission committed, outside its transaction, so the money path
 *   gains no statement; a process that dies between the commit and the signal leaves the job to
 *   the workers' poll, as before. At most one NOTIFY is in flight per process, and any number of
 *   admissions meanwhile share the next one, so a burst of admissions costs a few signals.
 *
 * A signal is only a hint: the claim decides what is claimable, under its locks.
 */
import { sql, type Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Capabilities } from '../../db/connect.js';
import { PgListener } from '../../db/listen.js';
import type { Database } from '../../db/schema.js';

export const JOBS_PENDING_CHANNEL = 'jobs_pending';

export interface PendingJobsSignalOptions {
  db: Kysely<Database>;
  caps: Capabilities;
  log: Logger;
  /** The PostgreSQL connection string for LISTEN (several writers only). */
  listenUrl?: string;
}

export class PendingJobsSignal {
  private sending: Promise<void> | undefined;
  private again = false;
  private closed = false;
  private readonly listeners: PgListener[] = [];

  constructor(private readonly options: PendingJobsSignalOptions) {}

  /** Whether other processes may be waiting for the signal (a shared PostgreSQL server). */
  get crossProcess(): boolean {
    return !this.options.caps.singleWriter && this.options.listenUrl !== undefined;
  }

  /** A job became claimable: tell the worker processes (coalesced; never throws). */
  announce(): void {
    if (!this.crossProcess || this.closed) return;
    if (this.sending) {
      this.again = true;
      return;
    }
    this.sending = sql`select pg_notify(${JOBS_PENDING_CHANNEL}, '')`
      .execute(this.options.db)
      .then(
        () => undefined,
        (err: unknown) => this.options.log.warn({ err }, 'jobs_pending signal failed; workers find the job at their next poll'),
      )
      .finally(() => {
        this.sending = undefined;
        if (this.again) {
          this.again = false;
          this.announce();
        }
      });
  }

  /**
   * Calls `onPending` whenever another process (or this one) announced a job, and once more after
   * the LISTEN connection came back (signals may have been missed). Returns the stop function;
   * a no-op where there is no other process.
   */
  listen(onPending: () => void): () => Promise<void> {
    if (!this.crossProcess) return async () => {};
    const listener = new PgListener({
      connectionString: this.options.listenUrl!,
      channel: JOBS_PENDING_CHANNEL,
      log: this.options.log,
      onNotify: () => onPending(),
      onReconnect: () => onPending(),
    });
    this.listeners.push(listener);
    void listener.start();
    return async () => {
      this.listeners.splice(this.listeners.indexOf(listener), 1);
      await listener.close();
    };
  }

  /** Resolves once every listener of this process is LISTENing (tests wait for it before signalling). */
  async ready(): Promise<void> {
    await Promise.all(this.listeners.map((l) => l.start()));
  }

  /** Stops listening and waits for a signal in flight (before the database closes). */
  async close(): Promise<void> {
    this.closed = true;
    this.again = false;
    await Promise.all(this.listeners.splice(0).map((l) => l.close()));
    await this.sending;
  }
}
