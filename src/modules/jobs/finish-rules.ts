/**
 * What finishing a job writes to its row, decided once for both ways a finish is applied
 * (lifecycle.finishJob one by one, finish-batch.ts for a workspace's batch): they differ only in
 * how they read and write.
 */
import { sha256Hex } from '../../lib/crypto.js';
import type { FinishRequest } from './lifecycle.js';
import type { JobRow } from './store.js';

/** The columns a finish sets (besides updated_at_ms, version and cost_mc, which the write derives). */
export type FinishFields = Pick<JobRow, 'status' | 'completed_at_ms' | 'lease_owner' | 'lease_expires_at_ms' | 'error_code'> &
  Partial<Pick<JobRow, 'progress' | 'output_json' | 'output_sha256' | 'checkpoint_json' | 'steps_done'>>;

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
