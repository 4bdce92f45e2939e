/**
 * The console's jobs list: a workspace's jobs newest first (keyset on the UUIDv7 id, like
 * GET /v1/jobs), optionally of one status and one operation. Reads the metadata columns only
 * (toMetadata needs no result), never another workspace's rows.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, JobStatus } from '../db/schema.js';
import type { JobReadRow } from '../modules/jobs/store.js';

type Db = Kysely<Database> | Transaction<Database>;

const METADATA_COLUMNS = [
  'id', 'workspace_id', 'tool_slug', 'operation_id', 'status', 'execution_origin', 'output_sha256', 'progress',
  'cost_mc', 'max_cost_mc', 'error_code', 'version', 'created_at_ms', 'started_at_ms', 'completed_at_ms',
] as const;

export async function pageJobsFiltered(
  db: Db,
  workspaceId: string,
  filter: { status?: JobStatus | undefined; operationId?: string | undefined },
  beforeId: string | undefined,
  limit: number,
): Promise<JobReadRow[]> {
  let q = db.selectFrom('jobs').select(METADATA_COLUMNS).where('workspace_id', '=', workspaceId);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.operationId !== undefined) q = q.where('operation_id', '=', filter.operationId);
  if (beforeId !== undefined) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  // The metadata never shows the result itself.
  return rows.map((r) => ({ ...r, output_json: null }));
}
