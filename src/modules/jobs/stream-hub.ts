/**
 * The open job streams of this process. A stream sends every version of its job once and in
 * order: whatever wakes it (a change notification, the safety poll, a LISTEN reconnect), it
 * reads the job and the stored versions after the last one it sent, so extra or lost wake-ups
 * can neither repeat nor skip a version. After the job's terminal version it ends.
 *
 * A stream also ends, releasing its slot, when the client goes away or reads too slowly, when
 * its slot row disappeared, when the key is no longer authorized (revoked, expired, workspace or
 * scope lost, streams no longer in the plan: re-checked whenever the auth cache is cleared, and
 * every `reauthorizeMs`, by the rule and the stream set shared with the MCP task streams,
 * stream-set.ts), and when the server closes (`closeAll`, from the app's preClose, so
 * app.close() never waits on an open stream).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../deps.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { authorize } from '../auth/service.js';
import type { AuthContext } from '../auth/types.js';
import { eventsSince, extendSlot, releaseSlot, requireStreamsAllowed, type StreamEvent } from './stream-service.js';
import { isTerminal } from './states.js';
import { toSnapshot } from './snapshot.js';
import * as jobs from './store.js';
import type { SseWriter } from './stream-writer.js';
import { reauthorizeStream, StreamSet, type StreamCredentials } from './stream-set.js';

export type StreamEndReason = 'terminal' | 'client' | 'slow-client' | 'unauthorized' | 'slot-lost' | 'job-gone' | 'shutdown' | 'error';

/** What a job stream needs to authorize its request again. */
export interface JobStreamCredentials extends StreamCredentials {
  workspaceHeader: string | string[] | undefined;
}

export interface JobStreamInit {
  auth: AuthContext;
  credentials: JobStreamCredentials;
  jobId: string;
  slotId: string;
  /** Version the client has (Last-Event-ID), or undefined for a fresh stream (snapshot first). */
  lastEventId: number | undefined;
  writer: SseWriter;
  log: FastifyBaseLogger;
}

export class JobStream {
  private lastSent: number | undefined;
  private pumping = false;
  private rewake = false;
  private ended = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => {};
  readonly done: Promise<void>;
  private resolveDone: () => void = () => {};

  constructor(
    private readonly deps: Deps,
    private readonly hub: StreamHub,
    private readonly init: JobStreamInit,
  ) {
    this.lastSent = init.lastEventId;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Subscribes to the job's changes; before the response starts, so no change is missed after it. */
  async subscribe(): Promise<void> {
    const unsubscribe = await this.deps.jobChanges.subscribe(this.init.jobId, () => this.wake());
    if (this.ended) unsubscribe();
    else this.unsubscribe = unsubscribe;
  }

  /** Starts the timers and sends what the client lacks; the stream is live afterwards. */
  run(): void {
    if (this.ended) return;
    const s = this.hub.settings;
    const every = (ms: number, fn: () => void) => {
      const t = setInterval(fn, ms);
      t.unref();
      this.timers.push(t);
    };
    every(s.keepAliveMs, () => {
      if (!this.init.writer.comment('keep-alive')) this.end(this.init.writer.writable ? 'slow-client' : 'client');
    });
    every(s.pollMs, () => this.wake());
    every(s.heartbeatMs, () => void this.heartbeat());
    this.wake();
  }

  /** Reads and sends what changed; coalesces wake-ups that arrive while a read runs. */
  wake(): void {
    if (this.ended) return;
    if (this.pumping) {
      this.rewake = true;
      return;
    }
    this.pumping = true;
    void this.pump()
      .catch((err: unknown) => {
        // The database unreachable (a PostgreSQL restart): the stream stays open (keep-alive
        // comments go on) and the next poll or notification reads again, from what it last sent.
        if (isDatabaseUnavailable(err)) {
          this.init.log.warn({ err: { message: (err as Error).message }, jobId: this.init.jobId }, 'job stream read failed: database unavailable; reading again later');
          return;
        }
        this.init.log.error({ err, jobId: this.init.jobId }, 'job stream read failed');
        this.end('error');
      })
      .finally(() => {
        this.pumping = false;
        if (this.rewake && !this.ended) {
          this.rewake = false;
          this.wake();
        }
      });
  }

  private async pump(): Promise<void> {
    const row = await jobs.findJob(this.deps.db, this.init.auth.workspace.id, this.init.jobId);
    if (this.ended) return;
    if (!row) return this.end('job-gone');
    const version = Number(row.version);
    if (this.lastSent === undefined) {
      this.send({ type: 'job', id: version, data: await toSnapshot(this.deps, row) });
    } else if (this.lastSent !== version) {
      await eventsSince(this.deps, row, this.lastSent, (event) => this.send(event));
    }
    if (this.ended) return;
    if (this.lastSent === version && isTerminal(row.status)) this.end('terminal');
  }

  /** Writes one frame; false (and the stream ends) when the client is gone or too slow. */
  private send(event: StreamEvent): boolean {
    if (this.ended) return false;
    const writer = this.init.writer;
    const ok = event.type === 'job' ? writer.event('job', event.id, event.data) : writer.event('gap', undefined, event.data);
    if (event.type === 'job' && writer.writable) this.lastSent = event.id;
    if (!ok) this.end(writer.writable ? 'slow-client' : 'client');
    return ok;
  }

  private async heartbeat(): Promise<void> {
    try {
      const alive = await extendSlot(this.deps, this.init.auth.workspace.id, this.init.slotId, this.hub.settings.slotTtlMs);
      if (!alive) this.end('slot-lost');
    } catch (err) {
      this.init.log.warn({ err, jobId: this.init.jobId }, 'stream slot heartbeat failed');
    }
  }

  /** Authorizes the original request again; ends the stream when it no longer passes. */
  async reauthorize(): Promise<void> {
    if (this.ended) return;
    const c = this.init.credentials;
    await reauthorizeStream(
      this.deps,
      c,
      async (key) => {
        requireStreamsAllowed((await authorize(this.deps, key, { workspaceHeader: c.workspaceHeader, scope: 'jobs:read', transport: 'rest', ip: c.ip })).workspace);
      },
      () => this.end('unauthorized'),
      { logger: this.init.log, message: 'job stream no longer authorized', fields: { jobId: this.init.jobId } },
    );
  }

  /** Ends the response (no further frame) and releases the slot; idempotent. */
  end(reason: StreamEndReason): void {
    if (this.ended) return;
    this.ended = true;
    for (const t of this.timers) clearInterval(t);
    this.unsubscribe();
    this.init.writer.end();
    this.hub.remove(this);
    const { workspace } = this.init.auth;
    this.init.log.debug({ jobId: this.init.jobId, reason }, 'job stream ended');
    releaseSlot(this.deps, workspace.id, this.init.slotId)
      .catch((err: unknown) => this.init.log.warn({ err, jobId: this.init.jobId }, 'stream slot release failed (it expires on its own)'))
      .finally(() => this.resolveDone());
  }
}

/** The job streams of this process: a StreamSet whose re-authorization timer runs while one is open. */
export class StreamHub extends StreamSet<JobStream> {
  private authTimer: NodeJS.Timeout | undefined;

  override add(stream: JobStream): void {
    super.add(stream);
    if (!this.authTimer) {
      this.authTimer = setInterval(() => this.checkAuth(), this.settings.authCheckMs);
      this.authTimer.unref();
    }
  }

  remove(stream: JobStream): void {
    this.delete(stream);
    if (this.size === 0 && this.authTimer) {
      clearInterval(this.authTimer);
      this.authTimer = undefined;
    }
  }

  /** Ends every open stream and waits for their slots to be released (server shutdown). */
  async closeAll(): Promise<void> {
    this.closing = true;
    const streams = this.list();
    for (const stream of streams) stream.end('shutdown');
    await Promise.all(streams.map((s) => s.done));
    if (this.authTimer) clearInterval(this.authTimer);
    this.authTimer = undefined;
  }
}
