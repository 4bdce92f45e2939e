/** Webhook delivery history and replay (decisions.md section 1). Never a secret or a payload. */
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { Livemode, NullableTimestamp, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { isLiveScope } from '../../lib/livemode.js';
import { toIso } from '../../lib/clock.js';
import { listWebhookDeliveries, replayDelivery } from './delivery-service.js';
import type { Delivery } from './delivery-store.js';

export const DeliverySchema = Type.Object({
  id: Uuid,
  webhookId: Uuid,
  eventId: Uuid,
  status: Type.Union(['pending', 'delivering', 'succeeded', 'failed'].map((s) => Type.Literal(s))),
  attempts: Type.Integer(),
  replayCount: Type.Integer(),
  lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
  lastErrorCode: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  deliveredAt: NullableTimestamp,
  livemode: Livemode,
});

export function presentDelivery(d: Delivery) {
  return {
    id: d.id,
    webhookId: d.webhookId,
    eventId: d.eventId,
    status: d.status,
    attempts: d.attempts,
    replayCount: d.replayCount,
    lastStatusCode: d.lastStatusCode,
    lastErrorCode: d.lastErrorCode,
    createdAt: toIso(d.createdAt),
    deliveredAt: toIso(d.deliveredAt),
    livemode: isLiveScope(d.workspaceId),
  };
}

const WebhookParams = Type.Object({ webhookId: Uuid }, { additionalProperties: false });
const DeliveryParams = Type.Object({ webhookId: Uuid, deliveryId: Uuid }, { additionalProperties: false });

export async function deliveryRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Params: { webhookId: string }; Querystring: PageQuery }>(
    '/v1/webhooks/:webhookId/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "A webhook's deliveries, newest first",
        headers: WorkspaceHeaders,
        params: WebhookParams,
        querystring: PageQuerySchema,
        response: {
          200: envelopeSchema(Type.Object({ items: Type.Array(DeliverySchema), nextCursor: Type.Union([Type.String(), Type.Null()]), hasMore: Type.Boolean() })),
        },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_DELIVERIES', message: 'Deliveries listed.', auth: 'key', scope: 'webhooks:read', points: 2 } },
    },
    async (request) => {
      const page = await listWebhookDeliveries(deps, requireAuth(request).workspace.id, request.params.webhookId, {
        limit: request.query.limit ?? 25,
        cursor: request.query.cursor,
      });
      return ok(request, { items: page.items.map(presentDelivery), nextCursor: page.nextCursor, hasMore: page.hasMore });
    },
  );

  app.post<{ Params: { webhookId: string; deliveryId: string } }>(
    '/v1/webhooks/:webhookId/deliveries/:deliveryId/replay',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Replay a failed delivery (same event id; at most 3 replays per event)',
        headers: WorkspaceHeaders,
        params: DeliveryParams,
        response: { 200: envelopeSchema(Type.Object({ delivery: DeliverySchema })) },
      },
      config: { meta: { code: 'PUBLIC_WEBHOOKS_REPLAY', message: 'Delivery queued again.', auth: 'key', scope: 'webhooks:write', points: 10 } },
    },
    async (request) => {
      const delivery = await replayDelivery(deps, requireAuth(request).workspace.id, request.params.webhookId, request.params.deliveryId);
      return ok(request, { delivery: presentDelivery(delivery) });
    },
  );
}
