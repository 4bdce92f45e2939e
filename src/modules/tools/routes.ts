/** GET /v1/tools and POST /v1/estimates. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { operationRequestBodySchema } from '../../http/openapi-operations.js';
import { WorkspaceHeaders } from '../../http/schemas.js';
import { catalog, estimate } from './service.js';
import { OperationRequestBody, type OperationRequest } from './schemas.js';

const ToolSchema = Type.Object({
  slug: Type.String(),
  name: Type.String(),
  description: Type.String(),
  operations: Type.Array(
    Type.Object(
      {
        operationId: Type.String(),
        summaryKey: Type.String(),
        inputSchema: Type.Object({}, { additionalProperties: true }),
        usagePoints: Type.Integer({ minimum: 1, maximum: 9007199254740991 }),
        asynchronous: Type.Boolean(),
      },
      { additionalProperties: false },
    ),
    { maxItems: 20 },
  ),
});

const EstimateSchema = Type.Object({
  operationId: Type.String(),
  estimatedCostMillicents: Type.Integer(),
  maximumCostMillicents: Type.Integer(),
  usagePoints: Type.Integer(),
});

export async function toolRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get(
    '/v1/tools',
    {
      schema: { tags: ['tools'], summary: 'Tool operations this key may run, with their input contracts', headers: WorkspaceHeaders, response: { 200: envelopeSchema(Type.Object({ items: Type.Array(ToolSchema, { maxItems: 100 }) })) } },
      config: { meta: { code: 'PUBLIC_TOOLS_LIST', message: 'Tools listed.', auth: 'key', scope: 'tools:read', points: 2 } },
    },
    async (request) => ok(request, { items: catalog(deps, requireAuth(request).key) }),
  );

  app.post<{ Body: OperationRequest }>(
    '/v1/estimates',
    {
      schema: { tags: ['tools'], summary: 'Estimate the cost of an operation without reserving credits', headers: WorkspaceHeaders, body: OperationRequestBody, response: { 200: envelopeSchema(EstimateSchema) } },
      config: {
        meta: {
          code: 'PUBLIC_TOOLS_ESTIMATE',
          message: 'Estimate computed.',
          auth: 'key',
          scope: 'tools:run',
          points: 4,
          document: { body: operationRequestBodySchema() },
          errors: { 400: 'INVALID_REQUEST, INVALID_INPUT (details.errors: JSON pointers and messages), UNKNOWN_OPERATION, OPERATION_UNAVAILABLE (no provider is configured for the operation), UNSUPPORTED_MEDIA.' },
        },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return ok(request, await estimate(deps, auth.key, auth.workspace.id, request.body.operationId, request.body.input as Record<string, unknown>));
    },
  );
}
