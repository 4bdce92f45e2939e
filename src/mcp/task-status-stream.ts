/**
 * One standing MCP stream (GET /mcp): its response, the workspaces it covers and its event ids.
 * It keeps the highest version it sent per job, so a task's notifications never repeat and never
 * go back to an older status, and it skips changes stamped before its floor (the time it opened,
 * or the position it resumes from, less RESUME_OVERLAP_MS). The first event is a priming event
 * (an id, `retry`, empty data); keep-alives are `: keep-alive` comments plus an id-only event that
 * moves the position on (task-events.ts says what a position is).
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import type { Task } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import type { ApiKey } from '../modules/auth/types.js';
import type { StreamSettings } from '../modules/jobs/stream-settings.js';
import { SSE_HEADERS } from '../modules/jobs/stream-writer.js';
import { reauthorizeStream } from '../modules/jobs/stream-set.js';
import { remember } from '../lib/lru.js';
import { readableWorkspaces } from './key-access.js';
import { RECONNECT_AFTER_MS, type StatusChange } from './task-events.js';
import { taskOf } from './tasks.js';

/** Versions a stream remembers having sent. */
const SENT_MAX = 5_000;

/** What a stream needs of the hub that feeds it (task-notifications.ts). */
export interface StreamOwner {
  readonly deps: Deps;
  readonly settings: Pick<StreamSettings, 'maxBufferedBytes'>;
  /** The stream ended: forget it and free its slot. */
  remove(stream: TaskStatusStream): void;
  /** The stream's workspaces changed (re-authorization). */
  workspacesChanged(): void;
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
    private readonly hub: StreamOwner,
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
  async reauthorize(): Promise<void> {
    if (this.ended) return;
    const deps = this.hub.deps;
    const c = this.init.credentials;
    await reauthorizeStream(
      deps,
      c,
      async (key) => {
        const candidates = this.init.pinned !== undefined ? [this.init.pinned] : key.workspaceIds;
        const allowed = await readableWorkspaces(deps, key, candidates, c.ip);
        if (allowed instanceof AppError || allowed.length === 0) throw allowed instanceof AppError ? allowed : new AppError('FORBIDDEN_WORKSPACE');
        if (allowed.length !== this.workspaces.size || allowed.some((w) => !this.workspaces.has(w))) {
          this.workspaces = new Set(allowed);
          this.hub.workspacesChanged();
        }
      },
      () => this.end('unauthorized'),
      { logger: this.init.log, message: 'MCP task stream no longer authorized' },
    );
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
