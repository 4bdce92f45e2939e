/** GET /v1/workspaces: the workspaces the key includes and its owner still manages. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { listKeyWorkspaces } from '../auth/workspaces.js';

const WorkspaceSchema = Type.Object({
  id: Uuid,
  name: Type.String({ maxLength: 200 }),
  organizationId: Type.Union([Uuid, Type.Null()]),
  role: Type.Union([Type.Literal('owner'), Type.Literal('admin')]),
  plan: Type.String({ maxLength: 64 }),
});

export async function workspaceRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get(
    '/v1/workspaces',
    {
      schema: {
        tags: ['workspaces'],
        summary: 'List the workspaces this key may use',
        headers: WorkspaceHeaders,
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(WorkspaceSchema, { maxItems: 100 }) })) },
      },
      config: { meta: { code: 'PUBLIC_WORKSPACES_LIST', message: 'Workspaces listed.', auth: 'key', scope: 'workspaces:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      return ok(request, { items: await listKeyWorkspaces(deps, auth.key) });
    },
  );
}
