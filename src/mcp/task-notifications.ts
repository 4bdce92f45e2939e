/**
 * The standing stream of the MCP endpoint (`GET /mcp`, Streamable HTTP, revision 2025-11-25):
 * `notifications/tasks/status` for every status change of the tasks (jobs) the stream's key may
 * read, in the workspace its X-Service-Workspace header names or, without the header, in every
 * workspace of the key (docs/mcp.md "Task status notifications", docs/decisions.md). This file is
 * the hub of a process's streams and what feeds them; task-status-stream.ts is one stream,
 * task-events.ts its events and resume, task-stream-route.ts the GET /mcp handler.
 *
 * No session: the stream is defined by its request (key, workspaces), so any API process can
 * serve it. Changes come from the database, in any process:
 *
 * - The job-change feed (modules/jobs/changes.ts: LISTEN/NOTIFY on PostgreSQL, in-process on
 *   the embedded databases) names each changed job; this process's hub then reads the job's head
 *   and its stored versions after the last one it read, once for all its streams, and offers
 *   every version whose status differs from the version before it (pending → processing →
 *   completed, failed or cancelled; also processing → pending when a job is requeued). A version
 *   is read from the job_versions table, not guessed from the wake-up, so duplicate or early
 *   wake-ups cannot repeat or skip a change.
 * - A safety poll (the job streams' poll interval) reads the active jobs of the covered
 *   workspaces: a job whose version moved, or that was active at the previous poll and is not
 *   any more, is read as above. It covers notifications lost while a LISTEN connection was down
 *   (a reconnect also polls at once).
 */
import type { ApiKey } from '../modules/auth/types.js';
import { activeJobHeads, jobHead, versionsOf } from '../modules/jobs/change-reads.js';
import { StreamSet } from '../modules/jobs/stream-set.js';
import { newId } from '../lib/ids.js';
import { remember } from '../lib/lru.js';
import { resumeChanges, statusChanges } from './task-events.js';
import type { TaskStatusStream } from './task-status-stream.js';
import * as slots from './task-stream-store.js';

/** Standing streams of one key, in all API processes together (a slot row each, task-stream-store.ts). */
export const STREAMS_PER_KEY = 10;
/** Jobs whose last read version the hub remembers. */
const JOB_CACHE_MAX = 20_000;

/** The hub of each app (by the root instance), for operators' and tests' counts. */
export const taskHubs = new WeakMap<object, TaskNotificationHub>();

/** Standing MCP streams open in an app. */
export function openTaskStreams(app: object): number {
  return taskHubs.get(app)?.size ?? 0;
}

/** The standing MCP streams of this process and what feeds them. */
export class TaskNotificationHub extends StreamSet<TaskStatusStream> {
  private unsubscribe: (() => void) | undefined;
  private subscribing: Promise<void> | undefined;
  private readonly timers: NodeJS.Timeout[] = [];
  /** Per job: the last version read and its status. */
  private readonly jobs = new Map<string, { version: number; status: string }>();
  /** Jobs being read, and whether another wake-up came meanwhile. */
  private readonly pumping = new Map<string, boolean>();
  /** Active jobs of each covered workspace at the last poll. */
  private active = new Map<string, Set<string>>();
  private polling = false;

  /**
   * A slot of the key's cap (STREAMS_PER_KEY, its streams in every process), or the refusal when
   * the key holds them all. Slots of a process whose heartbeat stopped stop counting after the
   * slot lifetime.
   */
  async takeSlot(key: ApiKey): Promise<{ slotId: string } | { scope: 'key'; open: number; limit: number }> {
    const now = this.deps.clock.now();
    const slotId = newId();
    const r = await slots.takeSlot(this.deps.db, this.deps.caps, { id: slotId, keyId: key.id, expiresAtMs: now + this.settings.slotTtlMs }, STREAMS_PER_KEY, now);
    return r.taken ? { slotId } : { scope: 'key', open: r.open, limit: STREAMS_PER_KEY };
  }

  /** Slot releases under way (a stop waits for them before the database closes). */
  private readonly releasing = new Set<Promise<void>>();

  /** Frees a slot (its stream ended, or its open did not become a stream); a failure leaves it to expire. */
  releaseSlot(slotId: string): void {
    const done = slots
      .deleteSlot(this.deps.db, slotId)
      .catch((err: unknown) => this.deps.log.warn({ err }, 'MCP stream slot release failed (it expires on its own)'))
      .finally(() => this.releasing.delete(done));
    this.releasing.add(done);
  }

  /** Extends every slot of this process's streams (every heartbeatMs); a stream whose slot is gone ends (its client reconnects and is counted again). */
  async heartbeat(): Promise<void> {
    const streams = this.list();
    if (streams.length === 0) return;
    try {
      const alive = await slots.extendSlots(this.deps.db, streams.map((s) => s.slotId), this.deps.clock.now() + this.settings.slotTtlMs);
      for (const s of streams) if (!alive.has(s.slotId)) s.end('slot-lost');
    } catch (err) {
      this.deps.log.warn({ err }, 'MCP stream slot heartbeat failed');
    }
  }

  /** Subscribes to the job-change feed (once for all streams); resolves once changes committed from now on are reported. */
  async listen(): Promise<void> {
    if (this.unsubscribe) return;
    this.subscribing ??= this.deps.jobChanges
      .subscribeAll((jobId) => (jobId === undefined ? void this.poll() : this.wake(jobId)))
      .then((unsubscribe) => {
        this.unsubscribe = unsubscribe;
        this.subscribing = undefined;
        if (this.idle) this.stopListening();
      });
    await this.subscribing;
  }

  private stopListening(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    for (const t of this.timers) clearInterval(t);
    this.timers.length = 0;
    this.active = new Map();
  }

  /** After an open that did not become a stream (the client left): stop listening if nothing else needs the feed. */
  releaseIfIdle(): void {
    if (this.idle && !this.subscribing) this.stopListening();
  }

  override add(stream: TaskStatusStream): void {
    super.add(stream);
    this.coveredCache = undefined;
    if (this.timers.length === 0) {
      const every = (ms: number, fn: () => void) => {
        const t = setInterval(fn, ms);
        t.unref();
        this.timers.push(t);
      };
      every(this.settings.keepAliveMs, () => {
        const now = this.deps.clock.now();
        for (const s of this.list()) s.keepAlive(now);
      });
      every(this.settings.pollMs, () => void this.poll());
      every(this.settings.authCheckMs, () => this.checkAuth());
      every(this.settings.heartbeatMs, () => void this.heartbeat());
    }
  }

  remove(stream: TaskStatusStream): void {
    if (this.delete(stream)) this.releaseSlot(stream.slotId);
    this.coveredCache = undefined;
    if (this.idle && !this.subscribing) this.stopListening();
  }

  /** The workspaces some stream covers (kept until a stream opens, ends or is re-authorized). */
  private coveredCache: Set<string> | undefined;

  covered(): ReadonlySet<string> {
    if (this.coveredCache) return this.coveredCache;
    const out = new Set<string>();
    for (const s of this.list()) for (const w of s.workspaces) out.add(w);
    return (this.coveredCache = out);
  }

  /** A stream's workspaces changed (re-authorization). */
  workspacesChanged(): void {
    this.coveredCache = undefined;
  }

  /** Reads what changed in a job; coalesces wake-ups that arrive while its read runs. */
  wake(jobId: string): void {
    if (this.size === 0) return;
    if (this.pumping.has(jobId)) {
      this.pumping.set(jobId, true);
      return;
    }
    this.pumping.set(jobId, false);
    void this.read(jobId)
      .catch((err: unknown) => this.deps.log.warn({ err, jobId }, 'MCP task notification read failed (the poll retries)'))
      .finally(() => {
        const again = this.pumping.get(jobId);
        this.pumping.delete(jobId);
        if (again) this.wake(jobId);
      });
  }

  private async read(jobId: string): Promise<void> {
    const head = await jobHead(this.deps.db, jobId);
    if (!head || !this.covered().has(head.workspaceId)) return;
    const known = this.jobs.get(jobId);
    if (known && known.version >= head.version) return;
    const versions = await versionsOf(this.deps.db, [jobId], known?.version ?? 0);
    const { changes, last } = statusChanges(head.workspaceId, versions, known?.status);
    if (last) remember(this.jobs, jobId, last, JOB_CACHE_MAX);
    for (const change of changes) for (const s of this.list()) s.offer(change);
  }

  /** The safety poll: active jobs whose version moved, and jobs no longer active since the last poll. */
  async poll(): Promise<void> {
    if (this.polling || this.size === 0) return;
    this.polling = true;
    try {
      const workspaces = [...this.covered()];
      const heads = await activeJobHeads(this.deps.db, workspaces);
      const now = new Map<string, Set<string>>(workspaces.map((w) => [w, new Set<string>()]));
      for (const head of heads) {
        now.get(head.workspaceId)?.add(head.id);
        const known = this.jobs.get(head.id);
        if (!known || known.version < head.version) this.wake(head.id);
      }
      for (const [workspaceId, before] of this.active) {
        const current = now.get(workspaceId);
        if (!current) continue;
        for (const id of before) if (!current.has(id)) this.wake(id);
      }
      this.active = now;
    } catch (err) {
      this.deps.log.warn({ err }, 'MCP task notification poll failed');
    } finally {
      this.polling = false;
    }
  }

  /**
   * A resumed stream: the status changes stamped at `fromMs` or later of the jobs of its
   * workspaces that are active now or ended since (their terminal events), in stamp order, to
   * this stream only. Live changes offered meanwhile are not lost: the stream keeps the higher
   * version per job.
   */
  async replay(stream: TaskStatusStream, fromMs: number): Promise<void> {
    stream.replaying = true;
    try {
      for (const change of await resumeChanges(this.deps.db, [...stream.workspaces], fromMs)) stream.offer(change);
    } finally {
      stream.replaying = false;
    }
  }

  /** Server shutdown: every stream gets its resume id and reconnect delay, then its response ends; resolves once their slots are freed. */
  async closeAll(): Promise<void> {
    this.closing = true;
    for (const stream of this.list()) stream.end('shutdown');
    this.stopListening();
    await Promise.all([...this.releasing]);
  }
}
