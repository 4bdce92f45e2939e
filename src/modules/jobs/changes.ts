/**
 * The job-change feed: wakes the streams of a job when it changed, in any process.
 *
 * Every change goes through lifecycle.recordChange, which calls `publishJobChange(trx, jobId)`
 * inside the change's transaction. What that does depends on the database's capabilities:
 *
 * - Several processes share the database (PostgreSQL server): `pg_notify('job_changes', jobId)`
 *   in the transaction. PostgreSQL delivers it at commit, to one LISTEN connection per process
 *   (src/db/listen.ts), so a stream is woken only once the change is readable.
 * - One process owns the database (embedded SQLite, PGlite): an in-process emitter. It fires
 *   while the transaction is still open, which is safe because those databases run on one
 *   connection that Kysely serialises: the woken stream's read queues behind the transaction and
 *   sees the committed change (or nothing, after a rollback).
 *
 * A wake-up is only a hint: streams always read "versions after the last one I sent" from the
 * job_versions table, so duplicate, early or lost wake-ups cannot skip or repeat a version, and
 * streams also poll slowly in case a notification was lost (LISTEN reconnect, crash).
 *
 * recordChange receives only the transaction, so the feed is found through the database it
 * belongs to: a transaction shares its Kysely instance's dialect adapter object, which is the
 * registry key (one feed per opened database).
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Capabilities } from '../../db/connect.js';
import { PgListener } from '../../db/listen.js';
import type { Database } from '../../db/schema.js';

export const JOB_CHANGES_CHANNEL = 'job_changes';

type Listener = () => void;
/** Told the id of every changed job, or undefined when changes may have been lost (LISTEN reconnected). */
type AnyListener = (jobId: string | undefined) => void;
type AdapterKey = object;

const feeds = new WeakMap<AdapterKey, JobChangeFeed>();

function adapterOf(db: Kysely<Database> | Transaction<Database>): AdapterKey {
  return db.getExecutor().adapter;
}

/** Called by recordChange inside the transaction of every job change. */
export async function publishJobChange(trx: Transaction<Database>, jobId: string): Promise<void> {
  const feed = feeds.get(adapterOf(trx));
  if (feed) await feed.publish(trx, jobId);
}

/**
 * For writers that record many changes in one statement: wakes this process's listeners at once
 * where the feed is in-process, and returns the job ids the statement must NOTIFY where it is
 * PostgreSQL's (empty when there is nothing to notify).
 */
export function jobChangesToNotify(db: Kysely<Database> | Transaction<Database>, jobIds: string[]): string[] {
  return feeds.get(adapterOf(db))?.publishLater(jobIds) ?? [];
}

/** Whether job changes written with `db` must be notified by the writing statement (PostgreSQL NOTIFY). */
export function jobChangesNotifiedInSql(db: Kysely<Database> | Transaction<Database>): boolean {
  return feeds.get(adapterOf(db))?.notifiesInSql ?? false;
}

export interface JobChangeFeedOptions {
  db: Kysely<Database>;
  caps: Capabilities;
  log: Logger;
  /** PostgreSQL connection string for the LISTEN connection; required when the database has several writers. */
  listenUrl?: string;
  /** How long a first subscription waits for LISTEN to be established before relying on polling. */
  listenWaitMs?: number;
}

export class JobChangeFeed {
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly anyListeners = new Set<AnyListener>();
  private readonly listener: PgListener | undefined;
  private readonly listenWaitMs: number;
  private closed = false;

  constructor(private readonly options: JobChangeFeedOptions) {
    this.listenWaitMs = options.listenWaitMs ?? 2000;
    if (!options.caps.singleWriter) {
      if (!options.listenUrl) throw new Error('a PostgreSQL connection string is needed to LISTEN for job changes');
      this.listener = new PgListener({
        connectionString: options.listenUrl,
        channel: JOB_CHANGES_CHANNEL,
        log: options.log,
        onNotify: (jobId) => this.wake(jobId),
        // Notifications may have been lost while the connection was down: wake everyone.
        onReconnect: () => this.wakeAll(),
      });
    }
    feeds.set(adapterOf(options.db), this);
  }

  /** Inside the change's transaction: NOTIFY (delivered at commit) or the in-process wake-up. */
  async publish(trx: Transaction<Database>, jobId: string): Promise<void> {
    if (this.listener) await sql`select pg_notify(${JOB_CHANGES_CHANNEL}, ${jobId})`.execute(trx);
    else this.wake(jobId);
  }

  get notifiesInSql(): boolean {
    return this.listener !== undefined;
  }

  /** jobChangesToNotify: the ids to NOTIFY, after waking in-process listeners. */
  publishLater(jobIds: string[]): string[] {
    if (this.listener) return jobIds;
    for (const id of jobIds) this.wake(id);
    return [];
  }

  /**
   * Calls `listener` after every change of `jobId` (possibly more often). Resolves once changes
   * committed from now on are sure to be reported (LISTEN active), or after a bounded wait when
   * the LISTEN connection is down (the caller's poll covers that time). Returns the unsubscribe.
   */
  async subscribe(jobId: string, listener: Listener): Promise<() => void> {
    let set = this.listeners.get(jobId);
    if (!set) this.listeners.set(jobId, (set = new Set()));
    set.add(listener);
    const unsubscribe = () => {
      const current = this.listeners.get(jobId);
      if (!current) return;
      current.delete(listener);
      if (current.size === 0) this.listeners.delete(jobId);
    };
    if (this.listener && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.listener.start(), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.listenWaitMs)))]);
      clearTimeout(timer);
    }
    return unsubscribe;
  }

  /**
   * Calls `listener` with the id of every changed job, of any workspace (possibly more often than
   * it changed), and with undefined when changes may have been lost (the LISTEN connection came
   * back), so the listener reads again whatever it follows. Resolves as `subscribe` does; returns
   * the unsubscribe. For followers of many jobs at once (the MCP endpoint's task notifications).
   */
  async subscribeAll(listener: AnyListener): Promise<() => void> {
    this.anyListeners.add(listener);
    const unsubscribe = () => {
      this.anyListeners.delete(listener);
    };
    if (this.listener && !this.closed) {
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([this.listener.start(), new Promise<void>((resolve) => (timer = setTimeout(resolve, this.listenWaitMs)))]);
      clearTimeout(timer);
    }
    return unsubscribe;
  }

  /** Number of jobs with at least one subscriber in this process. */
  get subscribedJobs(): number {
    return this.listeners.size;
  }

  private wake(jobId: string): void {
    for (const listener of [...this.anyListeners]) listener(jobId);
    const set = this.listeners.get(jobId);
    if (!set) return;
    for (const listener of [...set]) listener();
  }

  private wakeAll(): void {
    for (const listener of [...this.anyListeners]) listener(undefined);
    for (const set of [...this.listeners.values()]) for (const listener of [...set]) listener();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (feeds.get(adapterOf(this.options.db)) === this) feeds.delete(adapterOf(this.options.db));
    this.listeners.clear();
    this.anyListeners.clear();
    await this.listener?.close();
  }
}
