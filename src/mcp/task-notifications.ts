/**
 * The standing stream of the MCP endpoint (`GET /mcp`, Streamable HTTP, revision 2025-11-25):
 * `notifications/tasks/status` for every status change of the tasks (jobs) the stream's key may
 * read, in the workspace its X-Service-Workspace header names or, without the header, in every
 * workspace of the key (docs/mcp.md "Task status notifications", docs/decisions.md).
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
 *
 * Each stream keeps the highest version it sent per job, so a task's notifications never repeat
 * and never go back to an older status, and it skips changes stamped before its floor (the time
 * it opened, or the position it resumes from, less RESUME_OVERLAP_MS).
 *
 * Event ids are `<position>.<stream>.<n>`: `position` is a time in ms such that every change
 * stamped before `position - RESUME_OVERLAP_MS` was already offered to the stream; `stream` a
 * random tag of the stream and `n` a counter, so ids are unique across streams. The first event
 * is a priming event (an id, `retry`, empty data); keep-alives are `: keep-alive` comments plus
 * an id-only event that moves the position on. A client reconnecting with `Last-Event-ID` is sent
 * the status changes stamped from `position - RESUME_OVERLAP_MS` on (of the jobs active now and of
 * those that ended since, from their terminal events), then the stream goes on live.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { authenticateKey, checkAuthorization } from '../modules/auth/service.js';
import type { ApiKey } from '../modules/auth/types.js';
import { activeJobHeads, endedJobIds, jobHead, uuidV7Floor, versionsOf, type TimedVersion } from '../modules/jobs/change-reads.js';
import type { JobMetadata } from '../modules/jobs/snapshot.js';
import { SSE_HEADERS } from '../modules/jobs/stream-writer.js';
import type { StreamSettings } from '../modules/jobs/stream-settings.js';
import { newId } from '../lib/ids.js';
import * as slots from './task-stream-store.js';
import { taskOf } from './tasks.js';
import { remember } from '../lib/lru.js';

/** How far before a stream's position changes are offered again on resume (commit order and clocks of several processes differ). */
export const RESUME_OVERLAP_MS = 10_000;
/** The oldest position a reconnecting client is resumed from; an older Last-Event-ID starts the stream afresh. */
export const RESUME_WINDOW_MS = 10 * 60_000;
/** Ended tasks replayed per workspace on resume, newest first. */
export const RESUME_MAX_ENDED = 1000;
/** The `retry` field: how long a client waits before reconnecting after the server closed the stream. */
export const RECONNECT_AFTER_MS = 1000;
/** Standing streams of one key, in all API processes together (a slot row each, task-stream-store.ts). */
export const STREAMS_PER_KEY = 10;
/** Jobs whose last read version the hub remembers, and versions a stream remembers having sent. */
const JOB_CACHE_MAX = 20_000;
const SENT_MAX = 5_000;

const EVENT_ID_RE = /^(\d{1,15})\.[0-9a-f]{12}\.\d{1,15}$/;

/** The position a Last-Event-ID of this endpoint names; undefined when absent or empty; 400 otherwise. */
export function parseTaskEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? (header.length === 1 ? header[0]! : '\u0000') : header;
  if (value.trim() === '') return undefined;
  const match = EVENT_ID_RE.exec(value.trim());
  if (!match) throw new AppError('INVALID_REQUEST', { message: 'Last-Event-ID must be an event id this endpoint sent (<position>.<stream>.<n>).' });
  return Number(match[1]);
}

/** One status change of a job, as read from its stored versions. */
interface StatusChange {
  workspaceId: string;
  jobId: string;
  version: number;
  stampMs: number;
  snapshot: JobMetadata;
}

/** The status changes in a job's versions (oldest first): each version whose status differs from the one before. */
function statusChanges(workspaceId: string, versions: readonly TimedVersion[], previousStatus: string | undefined): { changes: StatusChange[]; last?: { version: number; status: string } } {
  const changes: StatusChange[] = [];
  let previous = previousStatus;
  let last: { version: number; status: string } | undefined;
  for (const v of versions) {
    if (previous !== undefined && v.snapshot.status !== previous) {
      changes.push({ workspaceId, jobId: v.jobId, version: v.version, stampMs: v.createdAtMs, snapshot: v.snapshot });
    }
    previous = v.snapshot.status;
    last = { version: v.version, status: v.snapshot.status };
  }
  return last ? { changes, last } : { changes };
}

export interface TaskStreamInit {
  key: ApiKey;
  credentials: { authorization: string | undefined; ip: string | undefined };
  /** The workspace the request's header named (the stream ends when the key loses it), or undefined for all of the key's. */
  pinned: string | undefined;
  workspaces: readonly string[];
  /** Changes stamped before this are not sent. */
  floorMs: number;
  /** The position of the first event id. */
  positionMs: number;
  /** The stream's slot row (its key's cap, counted across processes). */
  slotId: string;
  res: ServerResponse;
  log: FastifyBaseLogger;
}

export type TaskStreamEndReason = 'client' | 'slow-client' | 'unauthorized' | 'slot-lost' | 'shutdown' | 'error';

export class TaskStatusStream {
  readonly tag = randomBytes(6).toString('hex');
  readonly key: ApiKey;
  workspaces: Set<string>;
  private seq = 0;
  private position: number;
  private readonly floor: number;
  private readonly sent = new Map<string, number>();
  /** While a resume replays, ids keep the position the client resumed from. */
  replaying = false;
  private ended = false;

  constructor(
    private readonly hub: TaskNotificationHub,
    private readonly init: TaskStreamInit,
  ) {
    this.key = init.key;
    this.workspaces = new Set(init.workspaces);
    this.position = init.positionMs;
    this.floor = init.floorMs;
  }

  get isEnded(): boolean {
    return this.ended;
  }

  get slotId(): string {
    return this.init.slotId;
  }

  private nextId(): string {
    return `${this.position}.${this.tag}.${++this.seq}`;
  }

  /** The response head and the priming event (an id to resume from, the reconnect delay, no data). */
  open(headers: Record<string, string | number | string[] | undefined>): void {
    const head: Record<string, string | number | string[]> = {};
    for (const [name, value] of Object.entries(headers)) if (value !== undefined && !/^content-(type|length)$/i.test(name)) head[name] = value;
    this.init.res.writeHead(200, { ...head, ...SSE_HEADERS });
    this.init.res.flushHeaders();
    this.write(`id: ${this.nextId()}\nretry: ${RECONNECT_AFTER_MS}\ndata: \n\n`);
  }

  /** Sends the change if it is this stream's, new to it and not before its floor. */
  offer(change: StatusChange): void {
    if (this.ended || !this.workspaces.has(change.workspaceId) || change.stampMs < this.floor) return;
    if ((this.sent.get(change.jobId) ?? 0) >= change.version) return;
    remember(this.sent, change.jobId, change.version, SENT_MAX);
    if (!this.replaying) this.position = Math.max(this.position, change.stampMs);
    const task: Task = taskOf(change.snapshot);
    this.write(`event: message\nid: ${this.nextId()}\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: task })}\n\n`);
  }

  /** A keep-alive comment, and an id-only event that moves the resume position to `now`. */
  keepAlive(now: number): void {
    if (this.ended) return;
    if (!this.replaying) this.position = Math.max(this.position, now);
    this.write(`: keep-alive\n\nid: ${this.nextId()}\ndata: \n\n`);
  }

  private write(chunk: string): void {
    const res = this.init.res;
    if (this.ended) return;
    if (res.destroyed || !res.writable) return this.end('client');
    res.write(chunk);
    if (res.writableLength > this.hub.settings.maxBufferedBytes) this.end('slow-client');
  }

  /** The workspaces the key may still read jobs of; the stream ends when none is left (or the pinned one is gone). */
  async reauthorize(deps: Deps): Promise<void> {
    if (this.ended) return;
    const c = this.init.credentials;
    try {
      const key = await authenticateKey(deps, { authorization: c.authorization, query: [] });
      const candidates = this.init.pinned !== undefined ? [this.init.pinned] : key.workspaceIds;
      const allowed = await readableWorkspaces(deps, key, candidates, c.ip);
      if (allowed instanceof AppError || allowed.length === 0) throw allowed instanceof AppError ? allowed : new AppError('FORBIDDEN_WORKSPACE');
      if (allowed.length !== this.workspaces.size || allowed.some((w) => !this.workspaces.has(w))) {
        this.workspaces = new Set(allowed);
        this.hub.workspacesChanged();
      }
    } catch (err) {
      if (!this.ended) this.init.log.info({ code: (err as { code?: string }).code }, 'MCP task stream no longer authorized');
      this.end('unauthorized');
    }
  }

  /**
   * Ends the response. At shutdown the stream was not finished, only this connection: the last
   * event (an id and `retry`) tells the client where to resume and when to reconnect.
   */
  end(reason: TaskStreamEndReason): void {
    if (this.ended) return;
    if (reason === 'shutdown' && !this.init.res.destroyed && this.init.res.writable) {
      this.init.res.write(`id: ${this.nextId()}\nretry: ${RECONNECT_AFTER_MS}\ndata: \n\n`);
    }
    this.ended = true;
    if (!this.init.res.destroyed) this.init.res.end();
    this.hub.remove(this);
    this.init.log.debug({ reason }, 'MCP task stream ended');
  }
}

/**
 * The workspaces among `candidates` whose jobs the key may read over MCP (jobs:read, the
 * workspace still in the key and managed by its owner), or the refusal of the first one when
 * none is: a key without jobs:read is FORBIDDEN_SCOPE.
 */
export async function readableWorkspaces(deps: Deps, key: ApiKey, candidates: readonly string[], ip: string | undefined): Promise<string[] | AppError> {
  const allowed: string[] = [];
  let first: AppError | undefined;
  for (const workspaceId of candidates) {
    const result = await checkAuthorization(deps, key, { workspaceHeader: workspaceId, scope: 'jobs:read', transport: 'mcp', ip });
    if (result instanceof AppError) first ??= result;
    else allowed.push(result.workspace.id);
  }
  if (allowed.length === 0) return first ?? new AppError('FORBIDDEN_WORKSPACE');
  return allowed;
}

/** The hub of each app (by the root instance), for operators' and tests' counts. */
export const taskHubs = new WeakMap<object, TaskNotificationHub>();

/** Standing MCP streams open in an app. */
export function openTaskStreams(app: object): number {
  return taskHubs.get(app)?.size ?? 0;
}

/** The standing MCP streams of this process and what feeds them. */
export class TaskNotificationHub {
  private readonly streams = new Set<TaskStatusStream>();
  private opening = 0;
  closing = false;
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
  private generation: number;
  private lastFullCheck = Date.now();

  constructor(
    private readonly deps: Deps,
    readonly settings: StreamSettings,
  ) {
    this.generation = deps.authCache.generation;
  }

  get size(): number {
    return this.streams.size;
  }

  /** Counts a stream about to open against the process's cap; the refusal when over. The caller calls `opened()` once its open succeeded or failed. */
  reserve(processMax: number): { scope: 'service'; open: number; limit: number } | undefined {
    if (this.streams.size + this.opening >= processMax) return { scope: 'service', open: this.streams.size + this.opening, limit: processMax };
    this.opening++;
    return undefined;
  }

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
    const streams = [...this.streams];
    if (streams.length === 0) return;
    try {
      const alive = await slots.extendSlots(this.deps.db, streams.map((s) => s.slotId), this.deps.clock.now() + this.settings.slotTtlMs);
      for (const s of streams) if (!alive.has(s.slotId)) s.end('slot-lost');
    } catch (err) {
      this.deps.log.warn({ err }, 'MCP stream slot heartbeat failed');
    }
  }

  opened(): void {
    this.opening--;
  }

  /** Subscribes to the job-change feed (once for all streams); resolves once changes committed from now on are reported. */
  async listen(): Promise<void> {
    if (this.unsubscribe) return;
    this.subscribing ??= this.deps.jobChanges
      .subscribeAll((jobId) => (jobId === undefined ? void this.poll() : this.wake(jobId)))
      .then((unsubscribe) => {
        this.unsubscribe = unsubscribe;
        this.subscribing = undefined;
        if (this.streams.size === 0 && this.opening === 0) this.stopListening();
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
    if (this.streams.size === 0 && this.opening === 0 && !this.subscribing) this.stopListening();
  }

  add(stream: TaskStatusStream): void {
    this.streams.add(stream);
    this.coveredCache = undefined;
    if (this.timers.length === 0) {
      const every = (ms: number, fn: () => void) => {
        const t = setInterval(fn, ms);
        t.unref();
        this.timers.push(t);
      };
      every(this.settings.keepAliveMs, () => {
        const now = this.deps.clock.now();
        for (const s of [...this.streams]) s.keepAlive(now);
      });
      every(this.settings.pollMs, () => void this.poll());
      every(this.settings.authCheckMs, () => this.checkAuth());
      every(this.settings.heartbeatMs, () => void this.heartbeat());
    }
  }

  remove(stream: TaskStatusStream): void {
    if (this.streams.delete(stream)) this.releaseSlot(stream.slotId);
    this.coveredCache = undefined;
    if (this.streams.size === 0 && this.opening === 0 && !this.subscribing) this.stopListening();
  }

  /** The workspaces some stream covers (kept until a stream opens, ends or is re-authorized). */
  private coveredCache: Set<string> | undefined;

  covered(): ReadonlySet<string> {
    if (this.coveredCache) return this.coveredCache;
    const out = new Set<string>();
    for (const s of this.streams) for (const w of s.workspaces) out.add(w);
    return (this.coveredCache = out);
  }

  /** A stream's workspaces changed (re-authorization). */
  workspacesChanged(): void {
    this.coveredCache = undefined;
  }

  /** Reads what changed in a job; coalesces wake-ups that arrive while its read runs. */
  wake(jobId: string): void {
    if (this.streams.size === 0) return;
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
    for (const change of changes) for (const s of [...this.streams]) s.offer(change);
  }

  /** The safety poll: active jobs whose version moved, and jobs no longer active since the last poll. */
  async poll(): Promise<void> {
    if (this.polling || this.streams.size === 0) return;
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
      const workspaces = [...stream.workspaces];
      const ids = new Set((await activeJobHeads(this.deps.db, workspaces)).map((h) => h.id));
      const idFloor = uuidV7Floor(Math.min(fromMs, Date.now()) - 60_000);
      const owner = new Map<string, string>();
      for (const workspaceId of workspaces) {
        for (const id of await endedJobIds(this.deps.db, workspaceId, fromMs, idFloor, RESUME_MAX_ENDED)) ids.add(id);
      }
      const versions = await versionsOf(this.deps.db, [...ids]);
      const byJob = new Map<string, TimedVersion[]>();
      for (const v of versions) {
        owner.set(v.jobId, v.snapshot.workspaceId);
        const list = byJob.get(v.jobId) ?? [];
        list.push(v);
        byJob.set(v.jobId, list);
      }
      const changes: StatusChange[] = [];
      for (const [jobId, list] of byJob) changes.push(...statusChanges(owner.get(jobId)!, list, undefined).changes.filter((c) => c.stampMs >= fromMs));
      changes.sort((a, b) => a.stampMs - b.stampMs || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.version - b.version));
      for (const change of changes) stream.offer(change);
    } finally {
      stream.replaying = false;
    }
  }

  /** Re-authorizes every stream when the auth cache was cleared (a key, role or workspace changed), and every reauthorizeMs. */
  private checkAuth(): void {
    const generation = this.deps.authCache.generation;
    const due = Date.now() - this.lastFullCheck >= this.settings.reauthorizeMs;
    if (generation === this.generation && !due) return;
    this.generation = generation;
    if (due) this.lastFullCheck = Date.now();
    for (const stream of [...this.streams]) void stream.reauthorize(this.deps);
  }

  /** Server shutdown: every stream gets its resume id and reconnect delay, then its response ends; resolves once their slots are freed. */
  async closeAll(): Promise<void> {
    this.closing = true;
    for (const stream of [...this.streams]) stream.end('shutdown');
    this.stopListening();
    await Promise.all([...this.releasing]);
  }
}
