/** Webhook endpoints: create, list, update, revoke, rotate (the rules are in service.ts). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { IdParams, WorkspaceHeaders } from '../../http/schemas.js';
import * as S from './schemas.js';
import { createWebhook, listWebhooks, revokeWebhook, rotateWebhookSecret, updateWebhook } from './service.js';

const WebhookParams = IdParams('webhookId');
type WebhookParamsT = { webhookId: string };

export async function webhookRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.post<{ Body: S.CreateWebhookBodyT }>(
    '/v1/webhooks',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Create a webhook; the signing secret is returned once',
        headers: WorkspaceHeaders,
        body: S.CreateWebhookBody,
        response: { 200: envelopeSchema(S.WebhookWithSecretSchema), 400: S.UrlRejected, 409: S.LimitReached },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_CREATE', message: 'Webhook created; the secret is shown once.', auth: 'key', scope: 'webhooks:write', points: 5 } },
    },
    async (request) => ok(request, await createWebhook(deps, requireAuth(request).workspace.id, request.body)),
  );

  app.get(
    '/v1/webhooks',
    {
      schema: { tags: ['webhooks'], summary: 'Webhooks of the workspace (never a secret)', headers: WorkspaceHeaders, response: { 200: envelopeSchema(S.WebhookListSchema) } },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_LIST', message: 'Webhooks listed.', auth: 'key', scope: 'webhooks:read', points: 2 } },
    },
    async (request) => ok(request, { items: await listWebhooks(deps, requireAuth(request).workspace.id) }),
  );

  app.post<{ Params: WebhookParamsT; Body: S.UpdateWebhookBodyT }>(
    '/v1/webhooks/:webhookId/update',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Change url, eventTypes or enabled',
        headers: WorkspaceHeaders,
        params: WebhookParams,
        body: S.UpdateWebhookBody,
        response: { 200: envelopeSchema(S.WebhookOnlySchema), 400: S.UrlRejected, 404: S.NotFound, 409: S.Revoked },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_UPDATE', message: 'Webhook updated.', auth: 'key', scope: 'webhooks:write', points: 5 } },
    },
    async (request) => ok(request, { webhook: await updateWebhook(deps, requireAuth(request).workspace.id, request.params.webhookId, request.body) }),
  );

  app.post<{ Params: WebhookParamsT }>(
    '/v1/webhooks/:webhookId/revoke',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Revoke a webhook for good; its unfinished deliveries are abandoned',
        description: 'No body. Revoking a revoked webhook returns it again.',
        headers: WorkspaceHeaders,
        params: WebhookParams,
        body: S.NoBody,
        response: { 200: envelopeSchema(S.WebhookOnlySchema), 400: S.BadRequest, 404: S.NotFound },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_REVOKE', message: 'Webhook revoked.', auth: 'key', scope: 'webhooks:write', points: 2 } },
    },
    async (request) => ok(request, { webhook: await revokeWebhook(deps, requireAuth(request).workspace.id, request.params.webhookId) }),
  );

  app.post<{ Params: WebhookParamsT }>(
    '/v1/webhooks/:webhookId/rotate',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Replace the signing secret; the old one stops at once',
        description: 'No body. The new secret is returned once.',
        headers: WorkspaceHeaders,
        params: WebhookParams,
        body: S.NoBody,
        response: { 200: envelopeSchema(S.WebhookWithSecretSchema), 400: S.BadRequest, 404: S.NotFound, 409: S.Revoked },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_ROTATE', message: 'Webhook secret rotated; the new secret is shown once.', auth: 'key', scope: 'webhooks:write', points: 5 } },
    },
    async (request) => ok(request, await rotateWebhookSecret(deps, requireAuth(request).workspace.id, request.params.webhookId)),
  );
}
