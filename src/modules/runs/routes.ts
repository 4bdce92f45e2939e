/** POST /v1/runs: 200 with the result of a synchronous operation, 202 with the job of a queued one. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { operationRequestBodySchema, synchronousResultSchema } from '../../http/openapi-operations.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { OperationRequestBody, type OperationRequest } from '../tools/schemas.js';
import { QueuedJobSchema } from './schemas.js';
import { startRun } from './service.js';
import { lookup, validateIdempotencyKey } from '../idempotency/service.js';
import { Timestamp } from '../../http/schemas.js';

const RunHeaders = Type.Intersect([WorkspaceHeaders, Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: '1 to 128 characters; required.' })) })]);

const immediateFields = {
  kind: Type.Literal('result'),
  jobId: Type.String({ format: 'uuid' }),
  status: Type.String(),
  errorCode: Type.Union([Type.String(), Type.Null()]),
  costMillicents: Type.Integer(),
};

const RunResultSchema = Type.Union([
  Type.Object({ ...immediateFields, result: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()]) }),
  QueuedJobSchema,
]);

/** /openapi.json only: 200 is a synchronous operation's result, 202 a queued job (openapi-operations.ts). */
const documented = {
  body: operationRequestBodySchema(),
  responses: {
    200: envelopeSchema(Type.Object({ ...immediateFields, result: Type.Unsafe(synchronousResultSchema()) })),
    202: envelopeSchema(QueuedJobSchema),
  },
};

const LookupSchema = Type.Object({
  idempotencyKey: Type.String(),
  state: Type.Union([Type.Literal('completed'), Type.Literal('in_progress')], { description: 'in_progress: the first request is still running; ask again shortly.' }),
  statusCode: Type.Union([Type.Integer(), Type.Null()], { description: 'The HTTP status the request answered (200 or 202), null while in progress.' }),
  jobId: Type.Union([Type.String({ format: 'uuid' }), Type.Null()]),
  response: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()], { description: 'The data the request answered, as a replay returns it.' }),
  createdAt: Timestamp,
  expiresAt: Timestamp,
});

export async function runRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  // Not in the spec (docs/decisions.md "Idempotency-Key lookup"): an agent whose answer was lost
  // finds the job its key made without repeating the run.
  app.get(
    '/v1/runs/lookup',
    {
      schema: {
        tags: ['tools'],
        summary: 'Find the run or retry made with an Idempotency-Key (same key and workspace, last 24 hours)',
        headers: Type.Intersect([WorkspaceHeaders, Type.Object({ 'idempotency-key': Type.Optional(Type.String({ description: '1 to 128 characters; required.' })) })]),
        response: { 200: envelopeSchema(LookupSchema) },
      },
      config: {
        meta: {
          code: 'PUBLIC_RUNS_LOOKUP',
          message: 'Idempotency-Key found.',
          auth: 'key',
          scope: 'jobs:read',
          points: 1,
          errors: { 400: 'IDEMPOTENCY_KEY_REQUIRED.', 404: 'NOT_FOUND: the key was not used by this API key in this workspace in the last 24 hours.' },
        },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const idemKey = validateIdempotencyKey(request.headers['idempotency-key']);
      return ok(request, await lookup(deps, { keyId: auth.key.id, workspaceId: auth.workspace.id, idemKey }));
    },
  );

  app.post<{ Body: OperationRequest }>(
    '/v1/runs',
    {
      schema: {
        tags: ['tools'],
        summary: 'Run a Tool operation (synchronous: 200 with the result; queued: 202 with the job)',
        headers: RunHeaders,
        body: OperationRequestBody,
        response: { 200: envelopeSchema(RunResultSchema), 202: envelopeSchema(RunResultSchema) },
      },
      config: { meta: {
          code: 'PUBLIC_TOOLS_RUN',
          message: 'Run accepted.',
          auth: 'key',
          scope: 'tools:run',
          points: 'service',
          document: documented,
          errors: {
            400: 'INVALID_REQUEST, INVALID_INPUT (details.errors: JSON pointers and messages), UNKNOWN_OPERATION, OPERATION_UNAVAILABLE (no provider is configured for the operation), IDEMPOTENCY_KEY_REQUIRED, UNSUPPORTED_MEDIA.',
            402: 'INSUFFICIENT_CREDITS: spendable credits are below the operation’s maximum cost.',
            429: 'RATE_LIMITED (usage points), BUDGET_EXCEEDED (a key or workspace budget), QUEUE_FULL (waiting jobs); details.limit names the limit, Retry-After says when to retry.',
          },
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      // A replayed call that follows the job of its synchronous run (MCP progress) is told its id.
      const watcher = auth.transport === 'mcp' ? request.onSynchronousJob : undefined;
      const run = await startRun(deps, auth, {
        operationId: request.body.operationId,
        input: request.body.input as Record<string, unknown>,
        idempotencyKey: request.headers['idempotency-key'],
        executionOrigin: auth.transport === 'mcp' ? 'mcp' : 'api',
        ...(watcher ? { onSynchronousJob: watcher } : {}),
      });
      if (run.replayed) reply.header('Idempotent-Replayed', 'true');
      return reply.status(run.statusCode).send({
        success: true,
        code: 'PUBLIC_TOOLS_RUN',
        message: runMessage(run),
        data: run.body,
      });
    },
  );
}

/** The envelope message: a synchronous operation that failed says so (its errorCode says why). */
function runMessage(run: { statusCode: number; body: Record<string, unknown> }): string {
  if (run.statusCode === 202) return 'Job queued.';
  return run.body.status === 'failed' ? 'Operation failed; see errorCode.' : 'Operation completed.';
}
