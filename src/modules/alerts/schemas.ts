/** The OpenAPI shapes of alert events (feed entries and webhook bodies; docs/decisions.md "Alerts"). */
import { Type, type TSchema } from 'typebox';
import { Livemode, Millicents, NullableTimestamp, Timestamp, Uuid } from '../../http/schemas.js';

const EventFields = { id: Uuid, workspaceId: Uuid, livemode: Livemode, createdAt: Timestamp };

const alertEvent = (type: string, title: string, data: TSchema, description: string) =>
  Type.Object({ ...EventFields, type: Type.Literal(type), data }, { title, description });

const Period = Type.Union([Type.Literal('day'), Type.Literal('week'), Type.Literal('month')]);

export const BudgetThresholdEventSchema = alertEvent(
  'budget.threshold_crossed',
  'BudgetThresholdEvent',
  Type.Object({
    budget: Type.Object({
      scope: Type.Union([Type.Literal('key'), Type.Literal('workspace')]),
      keyId: Type.Optional(Uuid),
      period: Period,
    }),
    thresholdPercent: Type.Union([Type.Literal(50), Type.Literal(80), Type.Literal(100)]),
    spentMillicents: Millicents,
    reservedMillicents: Millicents,
    limitMillicents: Millicents,
  }),
  'A hold took a budget (of the key, keyId given, or of the workspace) to 50, 80 or 100 % of its limit, counting what was spent in the period and what is reserved; once per threshold and period.',
);

export const CreditsLowEventSchema = alertEvent(
  'credits.low',
  'CreditsLowEvent',
  Type.Object({ spendableMillicents: Millicents, thresholdMillicents: Millicents }),
  "Spendable credits fell below the workspace's low-credits threshold; at most once per UTC day.",
);

export const AllocationExpiringEventSchema = alertEvent(
  'allocation.expiring',
  'AllocationExpiringEvent',
  Type.Object({
    allocation: Type.Object({ id: Uuid, remainingMillicents: Millicents, expiresAt: NullableTimestamp, provenance: Type.String(), createdAt: Timestamp }),
  }),
  'Credits with some left expire within 7 days (as GET /v1/balance lists the allocation); once per allocation.',
);

export const KeyExpiringEventSchema = alertEvent(
  'key.expiring',
  'KeyExpiringEvent',
  Type.Object({ keyId: Uuid, expiresAt: Timestamp }),
  'An API key of the workspace expires within 7 days; once per key and expiry.',
);

export const KeySuspendedEventSchema = alertEvent(
  'key.suspended',
  'KeySuspendedEvent',
  Type.Object({ keyId: Uuid, until: Timestamp }),
  'An API key of the workspace was suspended after repeated authorization failures; at most once per key per UTC day.',
);

export const WebhookFailingEventSchema = alertEvent(
  'webhook.failing',
  'WebhookFailingEvent',
  Type.Object({
    webhookId: Uuid,
    hostname: Type.String(),
    deliveryId: Uuid,
    eventId: Uuid,
    attempts: Type.Integer(),
    lastErrorCode: Type.String(),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
    final: Type.Boolean({ description: 'True when the delivery gave up; false while it is still retried.' }),
  }),
  "A webhook's destination keeps failing (a delivery failed for good, or 3 attempts in a row); at most once per webhook per UTC day.",
);

export const AlertEventSchemas = [
  BudgetThresholdEventSchema,
  CreditsLowEventSchema,
  AllocationExpiringEventSchema,
  KeyExpiringEventSchema,
  KeySuspendedEventSchema,
  WebhookFailingEventSchema,
];
