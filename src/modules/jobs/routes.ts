/** Job endpoints: list, snapshot, complete output, cancel, retry, and the workspace queue. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { IdParams, Livemode, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { QueuedJobSchema } from '../runs/schemas.js';
import { JobMetadataSchema, JobSnapshotSchema } from './schemas.js';
import { readOutput } from './output.js';
import { outputPageBody } from './output-body.js';
import { cancelJob, getJob, listJobs, queueState, retryJob } from './service.js';
import type { JobSnapshot } from './snapshot.js';


/** Documents the route and is the serializer output-body.ts writes byte for byte (test/jobs/output-paging.test.ts). */
export const OutputSchema = Type.Object({
  jobId: Uuid,
  encoding: Type.Literal('json'),
  fragment: Type.String(),
  offsetBytes: Type.Integer(),
  totalBytes: Type.Integer(),
  sha256: Type.String(),
  snapshotExpiresAt: Timestamp,
  nextCursor: Type.Union([Type.String(), Type.Null()]),
});

const QueueSchema = Type.Object({
  workspaceId: Uuid,
  livemode: Livemode,
  running: Type.Integer(),
  waiting: Type.Integer(),
  runningLimit: Type.Integer(),
  waitingLimit: Type.Integer(),
  items: Type.Array(
    Type.Object({ jobId: Uuid, toolSlug: Type.String(), operationId: Type.String(), status: Type.String(), position: Type.Integer(), createdAt: Timestamp }),
    { maxItems: 100 },
  ),
});

const JobParams = IdParams('jobId');
const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';
/** GET /v1/jobs/{id} response bodies by (cached) snapshot object. */
const snapshotBodies = new WeakMap<JobSnapshot, string>();
type JobParamsT = { jobId: string };

export async function jobRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: PageQuery }>(
    '/v1/jobs',
    {
      schema: { tags: ['jobs'], summary: 'Jobs of the workspace, newest first (metadata only)', headers: WorkspaceHeaders, querystring: PageQuerySchema, response: { 200: envelopeSchema(Type.Object({ items: Type.Array(JobMetadataSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })) } },
      config: { meta: { code: 'PUBLIC_JOBS_LIST', message: 'Jobs listed.', auth: 'key', scope: 'jobs:read', points: 2 } },
    },
    async (request) => ok(request, await listJobs(deps, requireAuth(request).workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor })),
  );

  app.get<{ Params: JobParamsT }>(
    '/v1/jobs/:jobId',
    {
      schema: { tags: ['jobs'], summary: 'Job snapshot', headers: WorkspaceHeaders, params: JobParams, response: { 200: envelopeSchema(JobSnapshotSchema) } },
      config: { meta: { code: 'PUBLIC_JOBS_GET', message: 'Job read.', auth: 'key', scope: 'jobs:read', points: 1 } },
    },
    async (request, reply) => {
      const snapshot = await getJob(deps, requireAuth(request).workspace.id, request.params.jobId);
      // Snapshots are shared while a job does not change (snapshot.ts), so their response body is
      // serialized once, by the route's own response serializer, and sent as it is.
      let body = snapshotBodies.get(snapshot);
      if (body === undefined) {
        body = reply.serialize(ok(request, snapshot)) as string;
        snapshotBodies.set(snapshot, body);
      }
      return reply.type(JSON_CONTENT_TYPE).send(body);
    },
  );

  app.get<{ Params: JobParamsT; Querystring: { cursor?: string } }>(
    '/v1/jobs/:jobId/output',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Complete job output, in fragments',
        headers: WorkspaceHeaders,
        params: JobParams,
        querystring: Type.Object({ cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 1024 })) }, { additionalProperties: false }),
        response: { 200: envelopeSchema(OutputSchema) },
      },
      config: {
        meta: {
          code: 'PUBLIC_JOBS_OUTPUT',
          message: 'Output fragment read.',
          auth: 'key',
          scope: 'jobs:read',
          points: 2,
          errors: {
            409: 'OUTPUT_CHANGED: the result changed since the cursor was issued; restart without a cursor.',
            410: 'CURSOR_EXPIRED: the cursor is older than its lifetime (thirty minutes); restart without a cursor.',
            503: 'UNAVAILABLE: try again after Retry-After.',
          },
        },
      },
    },
    async (request, reply) => {
      const page = await readOutput(deps, requireAuth(request).workspace.id, request.params.jobId, request.query.cursor);
      // The body is written from the document's bytes (output-body.ts), not by the serializer.
      return reply.type(JSON_CONTENT_TYPE).send(outputPageBody(request, page, page.fragment));
    },
  );

  app.post<{ Params: JobParamsT }>(
    '/v1/jobs/:jobId/cancel',
    {
      schema: { tags: ['jobs'], summary: 'Cancel a pending or processing job', headers: WorkspaceHeaders, params: JobParams, response: { 200: envelopeSchema(JobSnapshotSchema) } },
      config: {
        meta: {
          code: 'PUBLIC_JOBS_CANCEL',
          message: 'Job cancelled.',
          auth: 'key',
          scope: 'jobs:write',
          points: 2,
          errors: { 409: 'JOB_NOT_CANCELLABLE: the job already completed or failed.' },
        },
      },
    },
    async (request) => ok(request, await cancelJob(deps, requireAuth(request).workspace.id, request.params.jobId)),
  );

  app.post<{ Params: JobParamsT }>(
    '/v1/jobs/:jobId/retry',
    {
      schema: {
        tags: ['jobs'],
        summary: 'Retry a failed job (new Idempotency-Key required)',
        headers: Type.Intersect([WorkspaceHeaders, Type.Object({ 'idempotency-key': Type.Optional(Type.String()) })]),
        params: JobParams,
        response: { 202: envelopeSchema(QueuedJobSchema) },
      },
      config: {
        meta: {
          code: 'PUBLIC_JOBS_RETRY',
          message: 'Job queued again.',
          auth: 'key',
          scope: 'jobs:write',
          points: 'service',
          errors: {
            400: 'IDEMPOTENCY_KEY_REQUIRED, OPERATION_UNAVAILABLE (the deployment no longer offers the job’s operation).',
            402: 'INSUFFICIENT_CREDITS: spendable credits are below the maximum cost of the steps still to do.',
            409: 'JOB_NOT_RETRYABLE (only failed queued jobs), PERSONAL_PROVIDER_KEY (a job funded by the workspace’s own provider key), IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS.',
            429: 'RATE_LIMITED (usage points), BUDGET_EXCEEDED (a key or workspace budget), QUEUE_FULL (waiting jobs); details.limit names the limit, Retry-After says when to retry.',
          },
        },
      },
    },
    async (request, reply) => {
      const result = await retryJob(deps, requireAuth(request), request.params.jobId, request.headers['idempotency-key']);
      if (result.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.status(result.statusCode).send({ success: true, code: 'PUBLIC_JOBS_RETRY', message: 'Job queued again.', data: result.body });
    },
  );

  app.get(
    '/v1/queue',
    {
      schema: { tags: ['jobs'], summary: 'Running and waiting jobs of the workspace', headers: WorkspaceHeaders, response: { 200: envelopeSchema(QueueSchema) } },
      config: { meta: { code: 'PUBLIC_QUEUE_GET', message: 'Queue read.', auth: 'key', scope: 'jobs:read', points: 1 } },
    },
    async (request) => ok(request, await queueState(deps, requireAuth(request))),
  );
}
