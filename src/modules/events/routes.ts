/** GET /v1/events (the workspace event feed) and the event schema shared with webhook bodies. */
import { Type, type Static } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { ErrorBodySchema, envelopeSchema, ok } from '../../http/envelope.js';
import { Livemode, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { JobMetadataSchema } from '../jobs/schemas.js';
import { MediaItemSchema } from '../media/schemas.js';
import { listEvents } from './service.js';
import { triggerTestEvent } from './test-trigger.js';
import { AlertEventSchemas } from '../alerts/schemas.js';
import { EVENT_TYPES } from './store.js';

const EventFields = { id: Uuid, workspaceId: Uuid, livemode: Livemode, createdAt: Timestamp };

const JobEventSchema = Type.Object(
  {
    ...EventFields,
    type: Type.Union([Type.Literal('job.completed'), Type.Literal('job.failed'), Type.Literal('job.cancelled')]),
    data: Type.Object({ job: JobMetadataSchema }, { description: 'The job snapshot at the change, without output.' }),
  },
  { title: 'JobEvent' },
);

const MediaEventSchema = Type.Object(
  {
    ...EventFields,
    type: Type.Literal('media.created'),
    data: Type.Object(
      { media: MediaItemSchema, jobId: Type.Optional(Type.String({ format: 'uuid', description: 'The job that produced the item; absent for uploads.' })) },
      { description: 'The new media item.' },
    ),
  },
  { title: 'MediaEvent' },
);

// Clients must tolerate event types added later (and their data); this also keeps one unexpected
// row from failing the serialisation of a whole page, which would stall a feed at that position.
const OtherEventSchema = Type.Object(
  { ...EventFields, type: Type.String(), data: Type.Object({}, { additionalProperties: true }) },
  { title: 'OtherEvent', description: 'An event of a type added after this version of the document; ignore types you do not know.' },
);

/** A workspace event: a feed entry and the JSON body of a webhook delivery. */
export const EventSchema = Type.Union([JobEventSchema, MediaEventSchema, ...AlertEventSchemas, OtherEventSchema]);

const EventQuerySchema = Type.Object(
  {
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 25 })),
    cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'nextCursor of an earlier page.' })),
    types: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: `Comma-separated event types to return: ${EVENT_TYPES.join(', ')}.` })),
  },
  { additionalProperties: false },
);
type EventQuery = Static<typeof EventQuerySchema>;

const EventPageSchema = Type.Object({
  items: Type.Array(EventSchema, { maxItems: 100, description: 'Oldest first.' }),
  nextCursor: Type.String({
    description: 'Never null: where to continue. After an empty page it is the position to poll again from; persist it only after processing the page.',
  }),
  hasMore: Type.Boolean({ description: 'True when more events are available now.' }),
});

export async function eventRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  app.get<{ Querystring: EventQuery }>(
    '/v1/events',
    {
      schema: {
        tags: ['events'],
        summary: 'The workspace event feed, oldest first',
        description:
          `Pages through the events of the selected workspace (${EVENT_TYPES.join(', ')}). ` +
          'Events appear once the change that caused them is committed; a position never moves past an event that could still appear.',
        headers: WorkspaceHeaders,
        querystring: EventQuerySchema,
        response: {
          200: envelopeSchema(EventPageSchema),
          400: { ...ErrorBodySchema, description: 'INVALID_CURSOR (forged, or from another workspace or list) or INVALID_REQUEST (bad limit or an unknown type).' },
        },
      },
      config: { meta: { code: 'PUBLIC_EVENTS_LIST', message: 'Events listed.', auth: 'key', scope: 'jobs:read', points: 2 } },
    },
    async (request) =>
      ok(request, await listEvents(deps, requireAuth(request).workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor, types: request.query.types })),
  );

  app.post<{ Body: Static<typeof TriggerBodySchema> }>(
    '/v1/test/webhook-events',
    {
      schema: {
        tags: ['events'],
        summary: 'Send a sample event to the test webhooks (test keys only)',
        description:
          'Stores a sample event of `type` in test mode, as `stripe trigger` does: it appears in the test event feed and is delivered, signed like any other, to every ' +
          'test webhook subscribed to its type. The ids in its data are made for the sample. Live keys get 403 TEST_MODE_ONLY.',
        headers: WorkspaceHeaders,
        body: TriggerBodySchema,
        response: {
          200: envelopeSchema(Type.Object({ event: EventSchema, deliveries: Type.Integer({ description: 'Test webhooks the event was queued for.' }) })),
          403: { ...ErrorBodySchema, description: 'TEST_MODE_ONLY (a live key), or the usual key refusals.' },
        },
      },
      config: { meta: { code: 'PUBLIC_TEST_WEBHOOK_EVENTS_CREATE', message: 'Sample event sent.', auth: 'key', scope: 'webhooks:write', points: 5 } },
    },
    async (request) => ok(request, await triggerTestEvent(deps, requireAuth(request), request.body.type)),
  );
}

const TriggerBodySchema = Type.Object(
  { type: Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)), { description: 'The event type to send a sample of.' }) },
  { additionalProperties: false },
);
