/**
 * The rules of GET /v1/jobs/{jobId}/stream before a stream starts, in this order: the request
 * must accept text/event-stream and carry a valid Last-Event-ID if any (400), the workspace
 * must have a stream limit above 0 (403 PLAN_REQUIRED), the job must be in the workspace (404),
 * and a stream slot must be free (429 CONCURRENCY_LIMITED, details.limit STREAMS).
 *
 * Slots are rows counted by every API process: the open takes the workspace row lock (the same
 * lock run admission takes) before counting, so two concurrent opens cannot both take the last
 * slot. Slots whose heartbeat stopped (a crashed process) stop counting at `expires_at_ms` and
 * are deleted by the next open of that workspace.
 *
 * Also the event payloads: the current version is the full job snapshot (as GET /v1/jobs/{id});
 * an older version comes from the job's stored history, which keeps metadata only, so its
 * `output` is `{}`.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import type { Workspace } from '../accounts/types.js';
import { lockForUpdate } from '../../db/locking.js';
import { lockAdmission } from '../runs/service.js';
import { resolveLimits } from '../usage/plans.js';
import { toSnapshot, type JobSnapshot } from './snapshot.js';
import * as jobs from './store.js';
import type { JobRow } from './store.js';
import * as store from './stream-store.js';

/** Seconds a refused open is told to wait (slots free when streams close or expire). */
const STREAMS_RETRY_AFTER_S = 5;

/**
 * True when the Accept header accepts text/event-stream: the most specific of the ranges that
 * match it (text/event-stream, then text/*, then * / *) decides, with a non-zero quality (RFC 9110
 * section 12.5.1), so `text/event-stream;q=0, * / *` refuses the stream that `* / *` alone would
 * allow. EventSource clients always send `Accept: text/event-stream`.
 */
export function acceptsEventStream(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(',') : accept;
  if (!value) return false;
  let best = -1;
  let quality = 0;
  for (const range of value.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const specificity = type === 'text/event-stream' ? 2 : type === 'text/*' ? 1 : type === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < best) continue;
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const usable = Number.isFinite(weight) ? weight : 0;
    quality = specificity > best ? usable : Math.max(quality, usable);
    best = specificity;
  }
  return best >= 0 && quality > 0;
}

/** The Last-Event-ID header as a version number; undefined when absent or empty; 400 otherwise. */
export function parseLastEventId(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const value = Array.isArray(header) ? (header.length === 1 ? header[0]! : '\u0000') : header;
  if (value.trim() === '') return undefined;
  if (!/^\s*\d{1,15}\s*$/.test(value)) {
    throw new AppError('INVALID_REQUEST', { message: 'Last-Event-ID must be an event id sent by this stream (a non-negative integer).' });
  }
  return Number(value.trim());
}

export function requireStreamsAllowed(workspace: Workspace): number {
  const limit = resolveLimits(workspace).streams;
  if (limit <= 0) throw new AppError('PLAN_REQUIRED', { message: 'Job streams (server-sent events) need the Pro plan; poll GET /v1/jobs/{jobId} or use webhooks instead.' });
  return limit;
}

export async function requireStreamJob(deps: Deps, workspaceId: string, jobId: string): Promise<JobRow> {
  const row = await jobs.findJob(deps.db, workspaceId, jobId);
  if (!row) throw new AppError('NOT_FOUND', { message: 'No such job in this workspace.' });
  return row;
}

export interface SlotRequest {
  workspace: Workspace;
  keyId: string;
  jobId: string;
  ttlMs: number;
}

/** 429 CONCURRENCY_LIMITED for a stream over the limit of `scope` (workspace, key or service). */
export function streamsLimited(scope: 'workspace' | 'key' | 'service', open: number, limit: number, now: number): AppError {
  const who = scope === 'service' ? 'This server' : scope === 'key' ? 'This API key' : 'The workspace';
  return new AppError('CONCURRENCY_LIMITED', {
    message: `${who} already has ${open} open job stream${open === 1 ? '' : 's'} (its limit is ${limit}); close one first.`,
    retryAfter: STREAMS_RETRY_AFTER_S,
    details: { limit: 'STREAMS', scope, streams: open, maximum: limit, resetsAt: new Date(now + STREAMS_RETRY_AFTER_S * 1000).toISOString() },
  });
}

/**
 * Takes a stream slot or throws 429 CONCURRENCY_LIMITED; returns the slot id. The plan's limit of
 * concurrent streams applies to the workspace and to the key (spec Limits: connection limits
 * apply per key, workspace and service): a key of several workspaces holds no more streams in
 * all of them together than the workspace it opens in allows. The workspace's lock, then the
 * key's, serialise concurrent opens (PostgreSQL; SQLite's write transaction holds everything).
 */
export async function acquireSlot(deps: Deps, req: SlotRequest): Promise<string> {
  const limit = requireStreamsAllowed(req.workspace);
  const now = deps.clock.now();
  const id = newId();
  await deps.db.transaction().execute(async (trx) => {
    await lockAdmission(deps, trx, req.workspace.id, null);
    await lockForUpdate(deps.caps, trx.selectFrom('api_keys').select('id').where('id', '=', req.keyId)).execute();
    await store.deleteExpiredSlots(trx, req.workspace.id, now);
    const open = await store.countLiveSlots(trx, { workspaceId: req.workspace.id }, now);
    if (open >= limit) throw streamsLimited('workspace', open, limit, now);
    const byKey = await store.countLiveSlots(trx, { keyId: req.keyId }, now);
    if (byKey >= limit) throw streamsLimited('key', byKey, limit, now);
    await store.insertSlot(trx, { id, workspace_id: req.workspace.id, key_id: req.keyId, job_id: req.jobId, expires_at_ms: now + req.ttlMs });
  });
  return id;
}

export function releaseSlot(deps: Deps, workspaceId: string, slotId: string): Promise<void> {
  return store.deleteSlot(deps.db, workspaceId, slotId);
}

export function extendSlot(deps: Deps, workspaceId: string, slotId: string, ttlMs: number): Promise<boolean> {
  return store.extendSlot(deps.db, workspaceId, slotId, deps.clock.now() + ttlMs);
}

/** One SSE frame to send: a job version, or the gap marker. */
export type StreamEvent = { type: 'job'; id: number; data: JobSnapshot | Record<string, unknown> } | { type: 'gap'; data: { jobId: string; lastEventId: number } };

const HISTORY_PAGE = 200;

/**
 * The events that bring a client that has seen version `after` up to `row` (the job as just
 * read): every stored version in (after, row.version] in order, the last one as the full
 * snapshot; or, when a needed version is missing from the history (or `after` is ahead of the
 * job), a gap event and then the current snapshot. `emit` is called in order; it returns false
 * to stop early (client gone).
 */
export async function eventsSince(deps: Deps, row: JobRow, after: number, emit: (event: StreamEvent) => boolean): Promise<void> {
  const current = Number(row.version);
  const gapThenSnapshot = async () => {
    if (!emit({ type: 'gap', data: { jobId: row.id, lastEventId: after } })) return;
    emit({ type: 'job', id: current, data: await toSnapshot(deps, row) });
  };
  if (after > current) return gapThenSnapshot();
  let expected = after + 1;
  while (expected < current) {
    const page = await store.versionsBetween(deps.db, row.id, expected - 1, current - 1, HISTORY_PAGE);
    if (page.length === 0) return gapThenSnapshot();
    for (const version of page) {
      if (version.version !== expected) return gapThenSnapshot();
      if (!emit({ type: 'job', id: version.version, data: { ...version.snapshot, output: {} } })) return;
      expected += 1;
    }
  }
  if (expected === current) emit({ type: 'job', id: current, data: await toSnapshot(deps, row) });
}
