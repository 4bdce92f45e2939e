/**
 * The webhook delivery worker of one process: claims due deliveries in batches with a lease
 * (delivery-claim.ts), keeps up to `concurrency` attempts on the wire, records each outcome under
 * its lease (delivery-attempt.ts) and periodically returns deliveries of crashed workers to the
 * queue. Attempts end within WEBHOOK_TIMEOUT_MS, well inside the lease, so no heartbeat is needed.
 *
 * Throughput: a claim takes a batch into a small local queue (at most 2 × `concurrency` deliveries,
 * claimed moments before they are sent, so what the claim read about the webhook, its secret and
 * its authorization is milliseconds old when the request goes out; one that waited longer than
 * STALE_STATE_MS behind slow destinations reads it again), and a slot is refilled from
 * it as soon as a response arrives; successes are written together by one conditional UPDATE,
 * riding along in the next claim's transaction or after SUCCESS_FLUSH_MS (the slot is free
 * meanwhile; the row stays leased until then). The hot statements are precompiled
 * (delivery-sql.ts). Woken when this process schedules or replays deliveries and when the local
 * queue runs dry (a claim then takes 2 × `concurrency`: half the statements and commits of
 * refilling every `concurrency`); otherwise it polls every `pollMs`.
 *
 * `stop()` stops claiming, gives claimed-but-unsent deliveries back at once, lets attempts in
 * flight finish for a grace period, then aborts the rest and gives them back too. `runOnce()`
 * lets tests drive it.
 */
import { setMaxListeners } from 'node:events';
import { hostname } from 'node:os';
import type { Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Deps } from '../../deps.js';
import { PollLoop, type RoundResult } from '../../lib/poll-loop.js';
import { retryWhileUnavailable } from '../../db/unavailable.js';
import { newId } from '../../lib/ids.js';
import { recordOutcome, sendAttempt, type AttemptOutcome } from './delivery-attempt.js';
import { claimDeliveries, recoverExpiredDeliveries, refreshWebhookState, releaseDelivery, type ClaimedDelivery } from './delivery-claim.js';
import { readDeliverySecret } from './delivery-secret.js';
import { finishSucceeded } from './delivery-store.js';

/** Most successes written by one statement, and how long a success may wait for company. */
const SUCCESS_BATCH = 200;
const SUCCESS_FLUSH_MS = 20;
/** A claimed delivery that waited longer than this in the local queue re-reads its webhook first. */
const STALE_STATE_MS = 1_000;
/** A claim waits until it can take at least this many × `concurrency` deliveries. */
const CLAIM_BATCH = 2;

function logContext(d: ClaimedDelivery) {
  return { deliveryId: d.id, webhookId: d.webhookId, workspaceId: d.workspaceId };
}

export interface DeliveryWorkerOptions {
  /** Attempts on the wire at once (default 32). */
  concurrency?: number;
  pollMs?: number;
  recoveryMs?: number;
  /** Lease of a claimed delivery; default max(60 s, 4 × WEBHOOK_TIMEOUT_MS). */
  leaseMs?: number;
}

export interface DeliveryStats {
  succeeded: number;
  failed: number;
  retried: number;
  leaseLost: number;
}

interface PendingSuccess {
  d: ClaimedDelivery;
  statusCode: number;
  /** Whether the write found the lease (set inside the transaction). */
  held: boolean;
  /** Resolves the attempt with `held` once the transaction committed. */
  settle: (held: boolean) => void;
  fail: (err: unknown) => void;
}

export class DeliveryWorker {
  readonly owner = `${hostname()}:${process.pid}:${newId().slice(-8)}`;
  readonly stats: DeliveryStats = { succeeded: 0, failed: 0, retried: 0, leaseLost: 0 };
  /** Every claimed delivery until its outcome is written (for stop()). */
  private readonly inFlight = new Map<string, Promise<void>>();
  /** Aborts every attempt still on the wire when stop()'s grace period is over (one for all). */
  private abort = DeliveryWorker.controller();
  /** Claimed, not yet sent. */
  private ready: ClaimedDelivery[] = [];
  /** Requests on the wire. */
  private sending = 0;
  private readonly concurrency: number;
  private readonly pollMs: number;
  private readonly recoveryMs: number;
  private readonly leaseMs: number;
  private readonly loop: PollLoop;
  /** The last claim was full: more may be due. */
  private backlog = false;
  /** Woken by a new delivery: look twice (the inserting transaction may not have committed yet). */
  private recheck = false;
  private lastRecovery = 0;
  private successes: PendingSuccess[] = [];
  private flushTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<unknown> | undefined;

  constructor(
    private readonly deps: Deps,
    options: DeliveryWorkerOptions = {},
  ) {
    this.concurrency = Math.max(1, options.concurrency ?? 32);
    this.pollMs = options.pollMs ?? 500;
    // Long enough for the local queue (two rounds of attempts at most) plus the attempt itself.
    this.leaseMs = options.leaseMs ?? Math.max(60_000, 4 * deps.config.webhookTimeoutMs);
    this.recoveryMs = options.recoveryMs ?? 5_000;
    this.loop = new PollLoop({ name: 'delivery worker', pollMs: this.pollMs, log: deps.log, round: () => this.round() });
  }

  private get stopped(): boolean {
    return !this.loop.running;
  }

  /** One signal shared by every attempt on the wire (each adds a listener while it runs). */
  private static controller(): AbortController {
    const c = new AbortController();
    setMaxListeners(0, c.signal);
    return c;
  }

  start(): void {
    if (!this.stopped) return;
    if (this.abort.signal.aborted) this.abort = DeliveryWorker.controller();
    this.loop.start();
  }

  /** Asks the loop to look for due deliveries now. */
  notify(): void {
    this.backlog = true;
    this.recheck = true;
    this.signal();
  }

  /** Stops claiming; gives back unsent deliveries; waits up to `graceMs`, then aborts the rest. */
  async stop(graceMs = 5_000): Promise<void> {
    if (this.stopped) return;
    await this.loop.stop();
    const unsent = this.ready.splice(0);
    await Promise.all(unsent.map((d) => this.release(d)));
    const all = Promise.allSettled([...this.inFlight.values()]);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, graceMs)))]);
    clearTimeout(timer);
    this.abort.abort(new Error('delivery worker stopping'));
    await all;
    await this.flushSuccesses();
  }

  /** Test driver: recovers expired leases, then claims and runs due deliveries until none is due. */
  async runOnce(): Promise<number> {
    let total = 0;
    await recoverExpiredDeliveries(this.deps);
    for (;;) {
      const batch = await claimDeliveries(this.deps, this.owner, this.concurrency, this.leaseMs);
      if (batch.length === 0) break;
      total += batch.length;
      await Promise.all(batch.map((d) => this.attempt(d, this.abort.signal)));
    }
    return total;
  }

  /** Wakes the loop; a wake-up while it is busy claiming is kept for when it would sleep. */
  private signal(): void {
    this.loop.notify();
  }

  /** One round of the loop: claim; right after a notify that found nothing yet, look again in 25 ms. */
  private async round(): Promise<RoundResult> {
    const claimed = await this.tick();
    const again = this.recheck && claimed === 0;
    this.recheck = false;
    return again ? { pauseMs: 25 } : {};
  }

  private async tick(): Promise<number> {
    const now = this.deps.clock.now();
    if (now - this.lastRecovery >= this.recoveryMs) {
      this.lastRecovery = now;
      await recoverExpiredDeliveries(this.deps);
    }
    // Room: the free slots plus a local queue of up to 2 × `concurrency` claimed deliveries,
    // claimed a batch of at least CLAIM_BATCH × `concurrency` at a time (an idle worker takes what is due).
    const room = 3 * this.concurrency - this.sending - this.ready.length;
    if (room < CLAIM_BATCH * this.concurrency && this.sending + this.ready.length > 0) return 0;
    // Successes waiting for their write ride along in the claim's transaction (one commit).
    const successes = this.flushing ? [] : this.takeSuccesses();
    let batch: ClaimedDelivery[];
    try {
      batch = await claimDeliveries(this.deps, this.owner, room, this.leaseMs, successes.length ? (trx) => this.writeSuccesses(trx, successes) : undefined);
    } catch (err) {
      for (const s of successes) s.fail(err);
      throw err;
    }
    for (const s of successes) s.settle(s.held);
    this.backlog = batch.length === room;
    if (this.stopped) {
      await Promise.all(batch.map((d) => this.release(d)));
      return 0;
    }
    this.ready.push(...batch);
    this.pump();
    return batch.length;
  }

  /** Fills free slots from the local queue; asks for a claim when the queue runs low. */
  private pump(): void {
    while (!this.stopped && this.sending < this.concurrency && this.ready.length > 0) this.launch(this.ready.shift()!);
    if (!this.stopped && this.backlog && this.sending + this.ready.length <= (3 - CLAIM_BATCH) * this.concurrency) this.signal();
  }

  private launch(d: ClaimedDelivery): void {
    this.sending++;
    const done = this.attempt(d, this.abort.signal, () => {
      this.sending--;
      this.pump();
    }).finally(() => this.inFlight.delete(d.id));
    this.inFlight.set(d.id, done);
  }

  /** One attempt: send, free the slot (`sent`), then write the outcome under the lease. */
  private async attempt(claimed: ClaimedDelivery, signal: AbortSignal, sent: () => void = () => {}): Promise<void> {
    let d = claimed;
    let outcome: AttemptOutcome;
    let sendSeconds = 0;
    try {
      if (performance.now() - d.readAt > STALE_STATE_MS) d = await refreshWebhookState(this.deps, d);
      const start = this.deps.clock.now();
      outcome = await sendAttempt(this.deps, d, () => readDeliverySecret(this.deps, d), signal);
      sendSeconds = Math.max(0, this.deps.clock.now() - start) / 1000;
    } catch (err) {
      sent();
      if (signal.aborted) await this.release(d);
      // Otherwise unexpected (secret unreadable …): the lease expires and the delivery is retried.
      else this.deps.log.error({ err, ...logContext(claimed) }, 'delivery attempt crashed');
      return;
    }
    sent();
    const delivered = outcome;
    try {
      // The database unreachable (a PostgreSQL restart): the outcome is written again while half the
      // lease lasts (or until stop() aborts), instead of the delivery waiting for its lease to
      // expire and being sent again. Every write is conditional on the lease token, so a repeat after a try that did commit
      // changes nothing (it then counts as a lost lease).
      const status = await retryWhileUnavailable(
        async () => (delivered.kind === 'succeeded' ? ((await this.recordSuccess(d, delivered.statusCode)) ? 'succeeded' : undefined) : await recordOutcome(this.deps, d, delivered)),
        { withinMs: this.leaseMs / 2, signal, onRetry: (err) => this.deps.log.warn({ err: { message: (err as Error).message }, ...logContext(claimed) }, 'database unavailable; recording the delivery outcome again') },
      );
      if (status === undefined) {
        this.stats.leaseLost++;
        this.deps.log.warn(logContext(claimed), 'delivery lease lost before its outcome was recorded; outcome dropped');
      } else if (status === 'pending') this.stats.retried++;
      else this.stats[status]++;
      this.count(d, outcome, status, sendSeconds);
    } catch (err) {
      // The database refused the write: the lease expires and the delivery is sent again.
      this.deps.log.error({ err, ...logContext(claimed) }, 'recording a delivery outcome failed');
    }
  }

  /** The attempt in /metrics: its outcome as recorded, and a success's latency or a delivery given up. */
  private count(d: ClaimedDelivery, outcome: AttemptOutcome, status: 'succeeded' | 'failed' | 'pending' | undefined, sendSeconds: number): void {
    const metrics = this.deps.metrics;
    const errorCode = outcome.kind === 'succeeded' ? null : outcome.errorCode;
    metrics.observeWebhookAttempt(status === undefined ? 'lease_lost' : status === 'pending' ? 'retried' : status, errorCode, sendSeconds);
    // A replay re-sends an old event on request: its age says nothing about delivery latency.
    if (status === 'succeeded' && d.replayCount === 0) metrics.observeWebhookDelivered(Math.max(0, this.deps.clock.now() - d.event.createdAtMs) / 1000);
    if (status === 'failed') metrics.observeWebhookGivenUp(errorCode ?? 'none');
  }

  private async release(d: ClaimedDelivery): Promise<void> {
    await releaseDelivery(this.deps, d.id, d.leaseToken).catch((err: unknown) =>
      this.deps.log.error({ err, deliveryId: d.id, webhookId: d.webhookId, workspaceId: d.workspaceId }, 'releasing a delivery failed'),
    );
  }

  /** Queues a success for the next batched write; resolves with whether the lease still held. */
  private recordSuccess(d: ClaimedDelivery, statusCode: number): Promise<boolean> {
    return new Promise<boolean>((done, fail) => {
      this.successes.push({ d, statusCode, held: false, settle: done, fail });
      if (this.successes.length >= SUCCESS_BATCH) void this.flushSuccesses();
      else this.flushTimer ??= setTimeout(() => void this.flushSuccesses(), SUCCESS_FLUSH_MS);
    });
  }

  private takeSuccesses(): PendingSuccess[] {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    return this.successes.splice(0, SUCCESS_BATCH);
  }

  /** Writes queued successes on their own (no claim came along in time). */
  private async flushSuccesses(): Promise<void> {
    // One writer at a time; a flush asked for meanwhile runs after it.
    while (this.flushing) await this.flushing;
    const batch = this.takeSuccesses();
    if (batch.length === 0) return;
    this.flushing = this.deps.db
      .transaction()
      .execute((trx) => this.writeSuccesses(trx, batch))
      .then(
        () => batch.forEach((s) => s.settle(s.held)),
        (err: unknown) => batch.forEach((s) => s.fail(err)),
      )
      .finally(() => (this.flushing = undefined));
    await this.flushing;
    if (this.successes.length > 0) this.flushTimer ??= setTimeout(() => void this.flushSuccesses(), 0);
  }

  /** The batched success write (settled by the caller once the transaction committed). */
  private async writeSuccesses(trx: Transaction<Database>, batch: PendingSuccess[]): Promise<void> {
    const byStatus = new Map<number, PendingSuccess[]>();
    for (const s of batch) {
      const group = byStatus.get(s.statusCode);
      if (group) group.push(s);
      else byStatus.set(s.statusCode, [s]);
    }
    const now = this.deps.clock.now();
    for (const [statusCode, group] of byStatus) {
      const held = await finishSucceeded(trx, group.map((s) => ({ id: s.d.id, leaseToken: s.d.leaseToken })), statusCode, now);
      for (const s of group) s.held = held.has(s.d.id);
    }
  }
}
