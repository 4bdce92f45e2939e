/** A queued job as admission answers it (POST /v1/runs 202, POST /v1/jobs/{id}/retry). */
import { Type } from 'typebox';

export const QueuedJobSchema = Type.Object({
  kind: Type.Literal('job'),
  jobId: Type.String({ format: 'uuid' }),
  status: Type.String(),
  maximumCostMillicents: Type.Integer(),
});
