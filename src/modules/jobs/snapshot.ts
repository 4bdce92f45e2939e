/** Public shapes of a job: the snapshot (GET /v1/jobs/{id}), list items and queue entries. */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { toIso } from '../../lib/clock.js';
import { signedMediaUrl } from '../media/service.js';
import { projectOutput } from './projection.js';
import type { JobReadRow } from './store.js';

export interface JobMetadata {
  id: string;
  workspaceId: string;
  livemode: boolean;
  toolSlug: string;
  operationId: string;
  status: string;
  executionOrigin: string | null;
  progress: { percentage: number };
  costMillicents: number;
  maximumCostMillicents: number;
  errorCode: string | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  version: number;
}

export interface JobSnapshot extends JobMetadata {
  output: Record<string, unknown>;
}

export function toMetadata(row: JobReadRow): JobMetadata {
  return {
    id: row.id,
    workspaceId: publicWorkspaceId(row.workspace_id),
    livemode: isLiveScope(row.workspace_id),
    toolSlug: row.tool_slug,
    operationId: row.operation_id,
    status: row.status,
    executionOrigin: row.execution_origin,
    progress: { percentage: Math.round(Number(row.progress) * 100) / 100 },
    costMillicents: Number(row.cost_mc),
    maximumCostMillicents: Number(row.max_cost_mc),
    errorCode: row.error_code,
    createdAt: toIso(Number(row.created_at_ms)),
    startedAt: toIso(row.started_at_ms === null ? null : Number(row.started_at_ms)),
    completedAt: toIso(row.completed_at_ms === null ? null : Number(row.completed_at_ms)),
    version: Number(row.version),
  };
}

/** The stored result with a fresh signed URL on every file reference, all signed at `signingTime`. */
export async function presentResult(deps: Deps, workspaceId: string, value: unknown, signingTime: number): Promise<unknown> {
  if (Array.isArray(value)) return Promise.all(value.map((v) => presentResult(deps, workspaceId, v, signingTime)));
  if (value !== null && typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    if (typeof obj.mediaId === 'string' && typeof obj.mimeType === 'string') {
      const { url, expiresAt } = await signedMediaUrl(deps, { id: obj.mediaId, workspaceId }, signingTime);
      return { ...obj, url, urlExpiresAt: toIso(expiresAt) };
    }
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(obj)) out[k] = await presentResult(deps, workspaceId, v, signingTime);
    return out;
  }
  return value;
}

export function storedResult(row: Pick<JobReadRow, 'output_json'>): Record<string, unknown> | null {
  return row.output_json === null ? null : (JSON.parse(row.output_json) as Record<string, unknown>);
}

/**
 * Rendered snapshots by job version and signing second: polling a job re-renders nothing while
 * it does not change. File URLs of a snapshot are signed at the start of the current second, so
 * every read within that second gets the same document (and URLs that live up to a second less).
 */
const SNAPSHOT_CACHE_MAX = 2000;
const snapshots = new Map<string, JobSnapshot>();

export async function toSnapshot(deps: Deps, row: JobReadRow): Promise<JobSnapshot> {
  const signingTime = Math.floor(deps.clock.now() / 1000) * 1000;
  const key = `${row.id}:${row.version}:${row.status}:${row.cost_mc}:${row.output_sha256}:${signingTime}`;
  const cached = snapshots.get(key);
  if (cached) return cached;
  const result = storedResult(row);
  const presented = result && ((await presentResult(deps, row.workspace_id, result, signingTime)) as Record<string, unknown>);
  const snapshot = { ...toMetadata(row), output: projectOutput(presented) };
  if (snapshots.size >= SNAPSHOT_CACHE_MAX) snapshots.delete(snapshots.keys().next().value!);
  snapshots.set(key, snapshot);
  return snapshot;
}
