/**
 * What every kind of long-lived stream of this process shares (the job streams of
 * GET /v1/jobs/{id}/stream, stream-hub.ts, and the MCP task streams of GET /mcp,
 * mcp/task-notifications.ts): the set of open streams, the process's cap counted with the
 * streams being opened, re-authorization of every stream when the auth cache was cleared (a key,
 * role or workspace changed) and every `reauthorizeMs`, and the shutdown flag.
 *
 * Re-authorization itself is one rule for both (`reauthorizeStream`): the key is authenticated
 * again from the original request's credentials and the stream's own check runs; a refusal ends
 * the stream, and the database being unreachable says nothing about the key (checked again at the
 * next round).
 */
import type { FastifyBaseLogger } from 'fastify';
import type { Deps } from '../../deps.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { authenticateKey } from '../auth/service.js';
import type { ApiKey } from '../auth/types.js';
import type { StreamSettings } from './stream-settings.js';

/** A stream as the set sees it. */
export interface OpenStream {
  /** Authorizes the original request again; ends the stream when it no longer passes. */
  reauthorize(): Promise<void>;
}

export class StreamSet<S extends OpenStream> {
  private readonly streams = new Set<S>();
  /** Streams being opened (counted toward the cap, not added yet). */
  private opening = 0;
  private generation: number;
  private lastFullCheck = Date.now();
  /** Set once the server stops: no stream opens any more. */
  closing = false;

  constructor(
    readonly deps: Deps,
    readonly settings: StreamSettings,
  ) {
    this.generation = deps.authCache.generation;
  }

  get size(): number {
    return this.streams.size;
  }

  /** Streams open or being opened in this process. */
  get load(): number {
    return this.streams.size + this.opening;
  }

  /** No stream open or being opened. */
  get idle(): boolean {
    return this.load === 0;
  }

  /**
   * Counts a stream about to open against the process's cap (STREAMS_PER_PROCESS); false when the
   * process already holds that many. The caller calls `opened()` once its open succeeded or failed.
   */
  reserve(max: number): boolean {
    if (this.load >= max) return false;
    this.opening++;
    return true;
  }

  opened(): void {
    this.opening--;
  }

  add(stream: S): void {
    this.streams.add(stream);
  }

  /** False when the stream was not in the set (removed already). */
  delete(stream: S): boolean {
    return this.streams.delete(stream);
  }

  /** The open streams, as a copy (a stream may end while the caller goes through them). */
  list(): S[] {
    return [...this.streams];
  }

  /** Re-authorizes every stream when the auth cache was cleared, or every reauthorizeMs (called every authCheckMs). */
  checkAuth(): void {
    const generation = this.deps.authCache.generation;
    const due = Date.now() - this.lastFullCheck >= this.settings.reauthorizeMs;
    if (generation === this.generation && !due) return;
    this.generation = generation;
    if (due) this.lastFullCheck = Date.now();
    for (const stream of this.list()) void stream.reauthorize();
  }
}

/** The original request's credentials, kept by a stream to authorize it again. */
export interface StreamCredentials {
  authorization: string | undefined;
  ip: string | undefined;
}

/**
 * The one re-authorization rule of streams: the key authenticated again, then the stream's own
 * `check` (scope, workspaces, plan); a refusal is logged with its code and ends the stream
 * (`refused`); the database unreachable leaves it open until the next round.
 */
export async function reauthorizeStream(
  deps: Deps,
  credentials: StreamCredentials,
  check: (key: ApiKey) => Promise<void>,
  refused: () => void,
  log: { logger: FastifyBaseLogger; message: string; fields?: Record<string, unknown> },
): Promise<void> {
  try {
    const key = await authenticateKey(deps, { authorization: credentials.authorization, query: [] });
    await check(key);
  } catch (err) {
    if (isDatabaseUnavailable(err)) return;
    log.logger.info({ ...log.fields, code: (err as { code?: string }).code }, log.message);
    refused();
  }
}
