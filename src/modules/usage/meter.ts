/**
 * Usage-point counters per workspace, shared by every key and transport (spec Authentication 6),
 * in two windows: the UTC minute and the UTC calendar month.
 *
 * Each process keeps a view of every active workspace: `base` (the shared counter as last read
 * from the database) plus `delta` (points this process admitted since). Admission checks the view
 * and never writes on the request path, so a refused request writes nothing. Every
 * `flushMs` the deltas are added to the shared rows (`used = used + delta RETURNING used`), which
 * also brings in what other processes admitted.
 *
 * Over-admission bound: with one process (embedded SQLite, the only writer) the view is exact.
 * With P processes, each may admit against a base up to one flush interval old, so a window can
 * exceed its limit by at most what the other P-1 processes admitted in one interval.
 *
 * No point is lost or counted twice: a delta belongs to the window it was admitted in (a counter
 * that rolls into a new window hands its unsent delta over as a pending write to the old row);
 * flushes never overlap, and `flush()` called during a running flush waits for it and then
 * writes what was admitted since, so `stop()` persists everything; a failed write is kept
 * (in the counter's delta, or as a pending write) and only the writes that did not happen are
 * retried.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { Clock } from '../../lib/clock.js';
import { periodRange } from '../../lib/periods.js';
import { UsageHistory, type Attribution } from './history.js';

export interface WindowView {
  limit: number;
  used: number;
  resetsAt: number;
}

export type LimitName = 'POINTS_MINUTE' | 'POINTS_MONTH';

export type ChargeResult =
  | { ok: true; minute: WindowView; month: WindowView }
  | { ok: false; limit: LimitName; resetsAt: number; minute: WindowView; month: WindowView };

interface Counter {
  start: number;
  end: number;
  base: number;
  delta: number;
}

interface Entry {
  workspaceId: string;
  minute: Counter;
  month: Counter;
  touchedAt: number;
}

interface PendingWrite {
  workspaceId: string;
  kind: 'minute' | 'month';
  start: number;
  delta: number;
}

interface Synced {
  entry: Entry;
  kind: 'minute' | 'month';
  counter: Counter;
  write: PendingWrite;
}

/** How often a flush also deletes minute counters older than an hour (deterministic, unlike a coin toss per flush). */
const PRUNE_EVERY_MS = 10 * 60_000;

export interface PointLimits {
  pointsPerMinute: number;
  pointsPerMonth: number;
}

export class UsageMeter {
  /** Points per key and operation, and 429s, for GET /v1/usage/history; written by every flush. */
  readonly history = new UsageHistory();
  private readonly entries = new Map<string, Entry>();
  private readonly loading = new Map<string, Promise<Entry>>();
  private pending: PendingWrite[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** Minute rows older than an hour are deleted by the first flush and then every PRUNE_EVERY_MS. */
  private nextPruneAt = 0;
  /** Set by stop(): the last flush writes every count of the history, refusals included. */
  private stopping = false;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
    private readonly flushMs: number,
    /** False when this process is the only writer: its view is exact and never needs re-reading. */
    private readonly refreshBases: boolean,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      // A tick while a flush is still running is skipped rather than queued behind it.
      if (!this.flushing) this.flush().catch(this.onError);
    }, this.flushMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.stopping = true;
    await this.flush();
  }

  /** Admits `points` for the workspace if both windows have room; refusals change nothing. */
  async charge(workspaceId: string, points: number, limits: PointLimits, by?: Attribution): Promise<ChargeResult> {
    return this.admit(this.cached(workspaceId) ?? (await this.entry(workspaceId)), points, limits, by);
  }

  /**
   * charge() without waiting, when the workspace's counters are in memory (every request after
   * the first of a workspace); undefined when they must be read first (then call charge()).
   */
  chargeNow(workspaceId: string, points: number, limits: PointLimits, by?: Attribution): ChargeResult | undefined {
    const entry = this.cached(workspaceId);
    return entry && this.admit(entry, points, limits, by);
  }

  /**
   * Gives back points a charge took for work that then did not happen (a batch of admissions
   * rolled back and decided again: admission-batch.ts). `charged` is what the charge returned;
   * points of a window that has rolled since are taken off that window's row.
   */
  refundNow(workspaceId: string, points: number, charged: { minute: WindowView; month: WindowView }, by?: Attribution): void {
    // The history takes the points off the minute they were charged in.
    if (by) this.history.add(workspaceId, charged.minute.resetsAt - 1, by, 'points', -points);
    const entry = this.entries.get(workspaceId);
    for (const kind of ['minute', 'month'] as const) {
      const end = charged[kind].resetsAt;
      const c = entry?.[kind];
      if (c && c.end === end) c.delta -= points;
      else this.pending.push({ workspaceId, kind, start: periodRange(kind, end - 1).start, delta: -points });
    }
  }

  async peek(workspaceId: string, limits: PointLimits): Promise<{ minute: WindowView; month: WindowView }> {
    const entry = this.cached(workspaceId) ?? (await this.entry(workspaceId));
    return { minute: this.view(entry.minute, limits.pointsPerMinute), month: this.view(entry.month, limits.pointsPerMonth) };
  }

  /** peek() without waiting, when the counters are in memory; undefined otherwise. */
  peekNow(workspaceId: string, limits: PointLimits): { minute: WindowView; month: WindowView } | undefined {
    const entry = this.cached(workspaceId);
    return entry && { minute: this.view(entry.minute, limits.pointsPerMinute), month: this.view(entry.month, limits.pointsPerMonth) };
  }

  private admit(entry: Entry, points: number, limits: PointLimits, by?: Attribution): ChargeResult {
    const minute = this.view(entry.minute, limits.pointsPerMinute);
    const month = this.view(entry.month, limits.pointsPerMonth);
    if (minute.used + points > minute.limit) return { ok: false, limit: 'POINTS_MINUTE', resetsAt: minute.resetsAt, minute, month };
    if (month.used + points > month.limit) return { ok: false, limit: 'POINTS_MONTH', resetsAt: month.resetsAt, minute, month };
    entry.minute.delta += points;
    entry.month.delta += points;
    minute.used += points;
    month.used += points;
    if (by) this.history.add(entry.workspaceId, entry.minute.start, by, 'points', points);
    return { ok: true, minute, month };
  }

  private view(c: Counter, limit: number): WindowView {
    return { limit, used: c.base + c.delta, resetsAt: c.end };
  }

  /** The workspace's counters if in memory, moved into the current windows; undefined otherwise. */
  private cached(workspaceId: string): Entry | undefined {
    const existing = this.entries.get(workspaceId);
    if (!existing) return undefined;
    const now = this.clock.now();
    existing.touchedAt = now;
    // A new window starts from base 0: this process has admitted nothing in it yet, and with
    // several processes the next flush brings in what the others admitted.
    if (now >= existing.minute.end || now >= existing.month.end) this.roll(existing, now);
    return existing;
  }

  private async entry(workspaceId: string): Promise<Entry> {
    const existing = this.cached(workspaceId);
    if (existing) return existing;
    let load = this.loading.get(workspaceId);
    if (!load) {
      load = this.load(workspaceId, this.clock.now()).finally(() => this.loading.delete(workspaceId));
      this.loading.set(workspaceId, load);
    }
    return load;
  }

  /** Moves a counter into the current window, keeping its unsent points as a pending write. */
  private roll(entry: Entry, now: number): void {
    for (const kind of ['minute', 'month'] as const) {
      const c = entry[kind];
      if (now < c.end) continue;
      if (c.delta > 0) this.pending.push({ workspaceId: entry.workspaceId, kind, start: c.start, delta: c.delta });
      const range = periodRange(kind, now);
      entry[kind] = { start: range.start, end: range.end, base: 0, delta: 0 };
    }
  }

  private async load(workspaceId: string, now: number): Promise<Entry> {
    const minuteRange = periodRange('minute', now);
    const monthRange = periodRange('month', now);
    const rows = await this.db
      .selectFrom('usage_counters')
      .select(['window_kind', 'window_start_ms', 'used'])
      .where('workspace_id', '=', workspaceId)
      .where((eb) =>
        eb.or([
          eb.and([eb('window_kind', '=', 'minute'), eb('window_start_ms', '=', minuteRange.start)]),
          eb.and([eb('window_kind', '=', 'month'), eb('window_start_ms', '=', monthRange.start)]),
        ]),
      )
      .execute();
    const used = (kind: string) => Number(rows.find((r) => r.window_kind === kind)?.used ?? 0);
    const entry: Entry = {
      workspaceId,
      minute: { start: minuteRange.start, end: minuteRange.end, base: used('minute'), delta: 0 },
      month: { start: monthRange.start, end: monthRange.end, base: used('month'), delta: 0 },
      touchedAt: now,
    };
    this.entries.set(workspaceId, entry);
    return entry;
  }

  /**
   * Writes every unsent delta and refreshes the bases of recently used workspaces. Called while a
   * flush runs, it waits for that one and then flushes again, so everything admitted before the
   * call is written when it resolves.
   */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    const run: Promise<void> = this.doFlush().finally(() => {
      if (this.flushing === run) this.flushing = undefined;
    });
    this.flushing = run;
    return run;
  }

  private async doFlush(): Promise<void> {
    const now = this.clock.now();
    const writes = this.pending;
    this.pending = [];
    const synced: Synced[] = [];
    for (const entry of this.entries.values()) {
      if (now - entry.touchedAt > 120_000 && entry.minute.delta === 0 && entry.month.delta === 0) {
        this.entries.delete(entry.workspaceId);
        continue;
      }
      for (const kind of ['minute', 'month'] as const) {
        const c = entry[kind];
        if (c.delta === 0 && !this.refreshBases) continue;
        const write = { workspaceId: entry.workspaceId, kind, start: c.start, delta: c.delta };
        // The points move from delta to base now, so charges during the write keep counting them.
        c.delta = 0;
        c.base += write.delta;
        synced.push({ entry, kind, counter: c, write });
      }
    }
    let written = 0;
    try {
      for (; written < writes.length; written++) await this.add(writes[written]!);
    } catch (err) {
      this.pending.push(...writes.slice(written));
      this.restore(synced);
      throw err;
    }
    let done = 0;
    try {
      for (; done < synced.length; done++) {
        const s = synced[done]!;
        const total = await this.add(s.write);
        // Other processes' points arrive here; ours are already part of `total`, and what was
        // admitted meanwhile is still in `delta`.
        if (total !== undefined) s.counter.base = total;
      }
    } catch (err) {
      this.restore(synced.slice(done));
      throw err;
    }
    const prune = now >= this.nextPruneAt;
    if (prune) {
      this.nextPruneAt = now + PRUNE_EVERY_MS;
      await this.pruneOldMinutes(now);
    }
    await this.history.flush(this.db, now, prune, this.stopping);
  }

  /** Puts back the points of writes that did not happen, where the next flush will find them. */
  private restore(unsent: Synced[]): void {
    for (const s of unsent) {
      if (s.write.delta === 0) continue;
      s.counter.base -= s.write.delta;
      const live = this.entries.get(s.entry.workspaceId) === s.entry && s.entry[s.kind] === s.counter;
      if (live) s.counter.delta += s.write.delta;
      // The counter rolled into a new window meanwhile: the points still belong to the old row.
      else this.pending.push(s.write);
    }
  }

  private async add(w: PendingWrite): Promise<number | undefined> {
    if (w.delta === 0) {
      const row = await this.db
        .selectFrom('usage_counters')
        .select('used')
        .where('workspace_id', '=', w.workspaceId)
        .where('window_kind', '=', w.kind)
        .where('window_start_ms', '=', w.start)
        .executeTakeFirst();
      return Number(row?.used ?? 0);
    }
    const row = await this.db
      .insertInto('usage_counters')
      .values({ workspace_id: w.workspaceId, window_kind: w.kind, window_start_ms: w.start, used: w.delta })
      .onConflict((oc) =>
        oc.columns(['workspace_id', 'window_kind', 'window_start_ms']).doUpdateSet((eb) => ({ used: eb('usage_counters.used', '+', w.delta) })),
      )
      .returning('used')
      .executeTakeFirst();
    return row ? Number(row.used) : undefined;
  }

  private async pruneOldMinutes(now: number): Promise<void> {
    await this.db.deleteFrom('usage_counters').where('window_kind', '=', 'minute').where('window_start_ms', '<', now - 3_600_000).execute();
  }
}
