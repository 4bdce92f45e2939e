/**
 * What finishing a job writes to its row, decided once for both ways a finish is applied
 * (lifecycle.finishJob one by one, finish-batch.ts for a workspace's batch): they differ only in
 * how they read and write.
 */
import { sha256Hex } from '../../lib/crypto.js';
import type { Transaction } from 'kysely';
import type { Database, JobStatus } from '../../db/schema.js';
import type { MediaRecord } from '../media/service.js';
import type { JobRow } from './store.js';
import type { TerminalStatus } from './states.js';

type Trx = Transaction<Database>;

/** Private worker state kept between steps and attempts. */
export interface Checkpoint {
  stepsDone: number;
  state: Record<string, unknown>;
  /** File references finished by steps, by result field. */
  files: { field: string; index?: number; ref: Record<string, unknown> }[];
  /** Cost of steps completed in the current attempt, not yet charged. */
  attemptCost: number;
  /** The provider (its name in the providers file) and model of the latest attempt; operators read them (admin job reads). */
  provider?: string;
  model?: string | null;
}

export interface FinishRequest {
  /** The job's workspace (locked first; finishes of one workspace share a transaction). */
  workspaceId: string;
  status: TerminalStatus;
  from: readonly JobStatus[];
  leaseToken: number | null;
  consumedMillicents: number;
  errorCode?: string | null;
  output?: Record<string, unknown> | null;
  checkpoint?: Checkpoint;
  /** Media items whose blobs the attempt wrote and whose rows are recorded with the finish. */
  media?: MediaRecord[];
  /**
   * More writes that belong to the finish (a synchronous run's stored response), in its
   * transaction, given the finished row. A finish with them is never batched.
   */
  alsoInFinish?: (trx: Trx, row: JobRow) => Promise<void>;
}

/** The columns a finish sets (besides updated_at_ms, version and cost_mc, which the write derives). */
export type FinishFields = Pick<JobRow, 'status' | 'completed_at_ms' | 'lease_owner' | 'lease_expires_at_ms' | 'error_code'> &
  Partial<Pick<JobRow, 'progress' | 'output_json' | 'output_sha256' | 'checkpoint_json' | 'steps_done'>>;

/**
 * Every column a finish may set, with its PostgreSQL type. The batched finish
 * (finish-batch-store.ts) sets exactly the fields finishFields returns, column by column from
 * this table, so the two paths cannot drift apart: a new field is a type error here first.
 */
export const FINISH_COLUMN_TYPES: Record<keyof FinishFields, 'text' | 'bigint' | 'integer' | 'double precision'> = {
  status: 'text',
  completed_at_ms: 'bigint',
  lease_owner: 'text',
  lease_expires_at_ms: 'bigint',
  error_code: 'text',
  progress: 'double precision',
  output_json: 'text',
  output_sha256: 'text',
  checkpoint_json: 'text',
  steps_done: 'integer',
};

export function finishFields(req: Pick<FinishRequest, 'status' | 'errorCode' | 'output' | 'checkpoint'>, now: number): FinishFields {
  const fields: FinishFields = {
    status: req.status,
    completed_at_ms: now,
    lease_owner: null,
    lease_expires_at_ms: null,
    error_code: req.status === 'failed' ? (req.errorCode ?? 'FAILED') : null,
  };
  if (req.status === 'completed') fields.progress = 100;
  if (req.output !== undefined) {
    fields.output_json = req.output === null ? null : JSON.stringify(req.output);
    fields.output_sha256 = fields.output_json === null ? null : sha256Hex(fields.output_json);
  }
  if (req.checkpoint) {
    // The attempt's cost is charged by this finish: the checkpoint keeps none of it.
    fields.checkpoint_json = JSON.stringify({ ...req.checkpoint, attemptCost: 0 });
    // The last step's checkpoint is recorded here, not by a write of its own (executor.ts).
    fields.steps_done = req.checkpoint.stepsDone;
  }
  return fields;
}
