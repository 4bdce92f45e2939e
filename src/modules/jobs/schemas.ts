/** Schemas of a job as the API answers it, shared by the job routes and the event payloads. */
import { Type } from 'typebox';
import { Livemode, NullableTimestamp, Timestamp, Uuid } from '../../http/schemas.js';
import { JOB_STATUSES } from './states.js';

const JobMetadataFields = {
  id: Uuid,
  workspaceId: Uuid,
  livemode: Livemode,
  toolSlug: Type.String(),
  operationId: Type.String(),
  status: Type.Union(JOB_STATUSES.map((s) => Type.Literal(s))),
  executionOrigin: Type.Union([Type.String(), Type.Null()]),
  progress: Type.Object({ percentage: Type.Number() }),
  costMillicents: Type.Integer(),
  maximumCostMillicents: Type.Integer(),
  errorCode: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  startedAt: NullableTimestamp,
  completedAt: NullableTimestamp,
  version: Type.Integer(),
};
/** A job without its output (lists, events). */
export const JobMetadataSchema = Type.Object(JobMetadataFields);
/** A job with its (projected) output. */
export const JobSnapshotSchema = Type.Object({ ...JobMetadataFields, output: Type.Object({}, { additionalProperties: true }) });
