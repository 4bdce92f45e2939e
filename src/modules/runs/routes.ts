/**
 * POST /v1/runs: 200 with the result of a synchronous operation, 202 with the job of a queued one;
 * a chat.generate run that prefers `Accept: text/event-stream` streams its reply (run-stream.ts).
 */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { operationRequestBodySchema, synchronousResultSchema } from '../../http/openapi-operations.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { OperationRequestBody, type OperationRequest } from '../tools/schemas.js';
import { QueuedJobSchema } from './schemas.js';
import { startRun, type RunRequest } from './service.js';
import { runAnswerModes, runMessage, STREAMED_OPERATIONS, streamRun } from './run-stream.js';
import { AppError } from '../../http/errors.js';
import { OPERATION_IDS } from '../../operations/ids.js';
import { lookup, validateIdempotencyKey } from '../idempotency/service.js';
import { Timestamp } from '../../http/schemas.js';

const RunHeaders = Type.Intersect([
  WorkspaceHeaders,
  Type.Object({
    'idempotency-key': Type.Optional(Type.String({ description: '1 to 128 characters; required.' })),
    accept: Type.Optional(
      Type.String({
        description:
          'JSON unless `text/event-stream` is preferred to it (then a chat.generate run streams its reply; see the 200 response). ' +
          'A request that accepts only `text/event-stream` for an operation that does not stream is 400 INVALID_REQUEST.',
      }),
    ),
  }),
]);

const STREAM_DESCRIPTION = [
  'chat.generate with `Accept: text/event-stream` (preferred to JSON): server-sent events once the run is admitted (refusals stay JSON errors). ',
  '`event: delta` frames with `data: {"text": "…"}` as the reply is generated (joined, they are `result.message.content`); ',
  'then one `event: result` frame whose data is this envelope as the JSON answer would be, plus `job` (the job snapshot of GET /v1/jobs/{jobId}), and the stream ends. ',
  'A failure after the stream started is an `event: error` frame with the error body. `: keep-alive` comments while the provider is silent. ',
  'A client that closes the connection before the result stops the provider call: the job is cancelled and charged what the provider had consumed.',
].join('');

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
    200: {
      content: {
        'application/json': { schema: envelopeSchema(Type.Object({ ...immediateFields, result: Type.Unsafe(synchronousResultSchema()) })) },
        'text/event-stream': { schema: Type.String({ description: STREAM_DESCRIPTION }) },
      },
    },
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
      // … and, when it follows the reply (a chat.generate call with progress), the text as it comes.
      const onText = auth.transport === 'mcp' ? request.onSynchronousText : undefined;
      const base: RunRequest = {
        operationId: request.body.operationId,
        input: request.body.input as Record<string, unknown>,
        idempotencyKey: request.headers['idempotency-key'],
        executionOrigin: auth.transport === 'mcp' ? 'mcp' : 'api',
        ...(watcher ? { onSynchronousJob: watcher } : {}),
        ...(onText ? { onText } : {}),
      };
      const modes = runAnswerModes(request.headers.accept);
      if (modes.stream && STREAMED_OPERATIONS.has(request.body.operationId)) return streamRun(deps, request, reply, auth, base);
      // An unknown operation is left to the run's own refusal (UNKNOWN_OPERATION).
      if (!modes.json && (OPERATION_IDS as readonly string[]).includes(request.body.operationId)) {
        throw new AppError('INVALID_REQUEST', {
          message: `Only ${[...STREAMED_OPERATIONS].join(', ')} runs stream; send \`Accept: application/json\` for ${request.body.operationId}.`,
          details: { header: 'Accept' },
        });
      }
      const run = await startRun(deps, auth, base);
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
