/**
 * What the metrics module offers: the Metrics interface every counting caller uses, and what the
 * scrape-time gauges read. The parts of index.ts each build a piece of this interface.
 */
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { PoolStats } from '../db/connect.js';
import type { Database } from '../db/schema.js';
import type { Clock } from '../lib/clock.js';

/** A job's terminal status as counted (cancelled jobs have no errorCode; `none` stands for it). */
export type JobOutcome = 'completed' | 'failed' | 'cancelled';
/** What became of a webhook delivery attempt: recorded as succeeded, to be retried, failed for good, or its lease was lost. */
export type WebhookAttemptOutcome = 'succeeded' | 'retried' | 'failed' | 'lease_lost';

export interface Metrics {
  registry: Registry;
  /** Counts one answered request: method, route pattern ('unmatched' for 404s), status, seconds. */
  observeRequest(method: string, route: string, status: number, seconds: number): void;
  /** Counts one 429 answer by its error code and `details.limit` (request path: plain maps). */
  observeTooManyRequests(code: string, limit: unknown): void;
  /**
   * Counts one batch of admissions or job finishes (runs/admission-batch.ts,
   * jobs/finish-batch.ts): its size, and whether it fell back to one-by-one processing.
   */
  observeBatch(kind: 'admission' | 'finish', items: number, fellBack: boolean): void;
  /** A job reached a terminal status in this process (worker, synchronous run, cancel, recovery). */
  observeJobFinished(operation: string, provider: string, status: JobOutcome, errorCode: string | null): void;
  /** One attempt of a job ran to its finish in this process: how long it ran. */
  observeJobAttempt(operation: string, provider: string, status: 'completed' | 'failed', errorCode: string | null, seconds: number): void;
  /** One call of a provider adapter (one attempt's work, its own HTTP retries and polling included). */
  observeProviderCall(provider: string, operation: string, errorCode: string | null, seconds: number): void;
  /** One webhook delivery attempt handled by this process's delivery worker. */
  observeWebhookAttempt(outcome: WebhookAttemptOutcome, errorCode: string | null, seconds: number): void;
  /** A delivery succeeded: seconds from its event's creation. */
  observeWebhookDelivered(secondsSinceEvent: number): void;
  /** A delivery ended failed (permanent refusal, or its attempts ran out). */
  observeWebhookGivenUp(errorCode: string): void;
  /** A housekeeping pass of this process ended. */
  observeHousekeepingPass(ok: boolean, finishedAtMs: number): void;
  /** The number of job streams this process holds open (read at scrape time). */
  trackOpenStreams(count: () => number): void;
  /** The number of standing MCP streams (GET /mcp) this process holds open (read at scrape time). */
  trackOpenTaskStreams(count: () => number): void;
}

/** What the scrape-time gauges read: the database, its pool and the clock. */
export interface MetricsSources {
  db: Kysely<Database>;
  clock: Clock;
  poolStats(): PoolStats;
  /** The operations to report queue gauges for even when they have no jobs (0). */
  operations: readonly string[];
  /** Logs a failed read of the database gauges (the scrape still answers). */
  onDatabaseError(err: unknown): void;
}
