/** Request and response schemas of the console's run and job endpoints (routes-runs.ts, routes-jobs.ts). */
import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { JobMetadataSchema, JobSnapshotSchema } from '../modules/jobs/schemas.js';
import { JOB_STATUSES } from '../modules/jobs/states.js';
import { QueuedJobSchema } from '../modules/runs/schemas.js';
import { OPERATION_IDS } from '../operations/ids.js';

const strict = { additionalProperties: false } as const;

export const JobParams = Type.Object({ workspaceId: Uuid, jobId: Uuid }, strict);

/** The key the console acts with (one of the workspace's keys the user may change). */
const KeyId = Uuid;

/**
 * The console's test-mode switch (decisions.md "Test mode"): `live` (the default) or `test`. On
 * the job endpoints, the jobs of that mode; on the run endpoints, the key must be of that mode.
 */
export const Mode = Type.Union([Type.Literal('live'), Type.Literal('test')]);

export const ToolsQuery = Type.Object({ keyId: KeyId, mode: Type.Optional(Mode) }, strict);

/** POST /v1/estimates' and /v1/runs' body, plus the key to act with (and, optionally, the mode it must be of). */
export const OperationBody = Type.Object(
  { keyId: KeyId, operationId: Type.String({ minLength: 1, maxLength: 100 }), input: Type.Object({}, { additionalProperties: true }), mode: Type.Optional(Mode) },
  strict,
);

export const RetryBody = Type.Object({ keyId: KeyId }, strict);

/** The mode of a job endpoint (live by default). */
export const ModeQuery = Type.Object({ mode: Type.Optional(Mode) }, strict);

export const JobsQuery = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    status: Type.Optional(Type.Union(JOB_STATUSES.map((s) => Type.Literal(s)))),
    operationId: Type.Optional(Type.Union(OPERATION_IDS.map((id) => Type.Literal(id)))),
    mode: Type.Optional(Mode),
  },
  strict,
);

export const OutputQuery = Type.Object({ cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })), mode: Type.Optional(Mode) }, strict);

const MediaFieldSchema = Type.Object({
  field: Type.String(),
  multiple: Type.Boolean(),
  kinds: Type.Array(Type.String()),
  within: Type.Optional(Type.String()),
});

export const ToolListSchema = Type.Object({
  items: Type.Array(
    Type.Object({
      slug: Type.String(),
      name: Type.String(),
      description: Type.String(),
      operations: Type.Array(
        Type.Object({
          operationId: Type.String(),
          summaryKey: Type.String(),
          inputSchema: Type.Object({}, { additionalProperties: true }),
          usagePoints: Type.Integer(),
          asynchronous: Type.Boolean(),
          /** Input fields that name workspace media, and the kinds each accepts. */
          mediaFields: Type.Array(MediaFieldSchema),
        }),
      ),
    }),
  ),
});

export const EstimateSchema = Type.Object({
  operationId: Type.String(),
  estimatedCostMillicents: Type.Integer(),
  maximumCostMillicents: Type.Integer(),
  usagePoints: Type.Integer(),
});

const ResultSchema = Type.Object({
  kind: Type.Literal('result'),
  jobId: Uuid,
  status: Type.String(),
  errorCode: Type.Union([Type.String(), Type.Null()]),
  costMillicents: Type.Integer(),
  result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]),
});

/** What POST /v1/runs answers (a synchronous result or a queued job), and whether it was a replay of the same Idempotency-Key. */
export const RunSchema = Type.Object({ run: Type.Union([ResultSchema, QueuedJobSchema]), replayed: Type.Boolean() });
export const RetrySchema = Type.Object({ run: QueuedJobSchema, replayed: Type.Boolean() });

export const JobListSchema = Type.Object({ items: Type.Array(JobMetadataSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) });
export const JobSchema = JobSnapshotSchema;

export const OutputPageSchema = Type.Object({
  jobId: Uuid,
  encoding: Type.Literal('json'),
  fragment: Type.String(),
  offsetBytes: Type.Integer(),
  totalBytes: Type.Integer(),
  sha256: Type.String(),
  snapshotExpiresAt: Timestamp,
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});
