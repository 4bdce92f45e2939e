/**
 * What the standing MCP stream sends and from where it resumes: the status changes read from a
 * job's stored versions (each version whose status differs from the one before it), the ids of
 * its events, and the changes a reconnecting client is sent again.
 *
 * Event ids are `<position>.<stream>.<n>`: `position` is a time in ms such that every change
 * stamped before `position - RESUME_OVERLAP_MS` was already offered to the stream; `stream` a
 * random tag of the stream and `n` a counter, so ids are unique across streams. A client
 * reconnecting with `Last-Event-ID` is sent the status changes stamped from
 * `position - RESUME_OVERLAP_MS` on (of the jobs active now and of those that ended since, from
 * their terminal events), then the stream goes on live.
 */
import { scopeFor } from '../lib/livemode.js';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { activeJobHeads, endedJobIds, uuidV7Floor, versionsOf, type TimedVersion } from '../modules/jobs/change-reads.js';
import type { JobMetadata } from '../modules/jobs/snapshot.js';

/** How far before a stream's position changes are offered again on resume (commit order and clocks of several processes differ). */
export const RESUME_OVERLAP_MS = 10_000;
/** The oldest position a reconnecting client is resumed from; an older Last-Event-ID starts the stream afresh. */
export const RESUME_WINDOW_MS = 10 * 60_000;
/** Ended tasks replayed per workspace on resume, newest first. */
export const RESUME_MAX_ENDED = 1000;
/** The `retry` field: how long a client waits before reconnecting after the server closed the stream. */
export const RECONNECT_AFTER_MS = 1000;

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
export interface StatusChange {
  workspaceId: string;
  jobId: string;
  version: number;
  stampMs: number;
  snapshot: JobMetadata;
}

/** The status changes in a job's versions (oldest first): each version whose status differs from the one before. */
export function statusChanges(
  workspaceId: string,
  versions: readonly TimedVersion[],
  previousStatus: string | undefined,
): { changes: StatusChange[]; last?: { version: number; status: string } } {
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

/**
 * What a resumed stream is sent again: the status changes stamped at `fromMs` or later of the
 * jobs of `workspaces` that are active now or ended since (their terminal events), in stamp order.
 */
export async function resumeChanges(db: Deps['db'], workspaces: readonly string[], fromMs: number): Promise<StatusChange[]> {
  const ids = new Set((await activeJobHeads(db, workspaces)).map((h) => h.id));
  const idFloor = uuidV7Floor(Math.min(fromMs, Date.now()) - 60_000);
  const owner = new Map<string, string>();
  for (const workspaceId of workspaces) {
    for (const id of await endedJobIds(db, workspaceId, fromMs, idFloor, RESUME_MAX_ENDED)) ids.add(id);
  }
  const versions = await versionsOf(db, [...ids]);
  const byJob = new Map<string, TimedVersion[]>();
  for (const v of versions) {
    // The stored workspace id (a test twin's for test mode), as the stream's workspaces are: the
    // snapshot shows the public id and its mode (versions from before test mode are live).
    owner.set(v.jobId, scopeFor(v.snapshot.workspaceId, v.snapshot.livemode === false ? 'test' : 'live'));
    const list = byJob.get(v.jobId) ?? [];
    list.push(v);
    byJob.set(v.jobId, list);
  }
  const changes: StatusChange[] = [];
  for (const [jobId, list] of byJob) changes.push(...statusChanges(owner.get(jobId)!, list, undefined).changes.filter((c) => c.stampMs >= fromMs));
  changes.sort((a, b) => a.stampMs - b.stampMs || (a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : a.version - b.version));
  return changes;
}
