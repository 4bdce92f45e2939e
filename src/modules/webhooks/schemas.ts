/** TypeBox schemas of the webhook endpoints: they validate requests, shape responses and feed /openapi.json. */
import { Type, type Static } from 'typebox';
import { ErrorBodySchema } from '../../http/envelope.js';
import { Livemode, Timestamp, Uuid } from '../../http/schemas.js';
import { EVENT_TYPES } from '../events/store.js';
import { MAX_URL_LENGTH } from './destination.js';
import { MAX_ACTIVE_WEBHOOKS } from './service.js';

const strict = { additionalProperties: false } as const;

export const EventTypeSchema = Type.Union(EVENT_TYPES.map((t) => Type.Literal(t)));

const UrlField = Type.String({
  minLength: 1,
  description:
    `HTTPS URL of at most ${MAX_URL_LENGTH} characters, without user name, password or fragment, on a hostname verified in this workspace ` +
    '(exactly: a verified parent domain does not cover it) that resolves only to public addresses.',
});

const EventTypesField = Type.Array(EventTypeSchema, {
  minItems: 1,
  maxItems: EVENT_TYPES.length,
  uniqueItems: true,
  description: `Event types to deliver (at least one, no repeats): ${EVENT_TYPES.join(', ')}.`,
});

export const WebhookSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  livemode: Livemode,
  url: Type.String(),
  eventTypes: Type.Array(EventTypeSchema),
  enabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  revokedAt: Type.Union([Timestamp, Type.Null()], { description: 'When the webhook was revoked; null while active.' }),
});

const SecretField = Type.String({ description: 'The signing secret (whsec_…), shown only in this response. The HMAC key is this string as UTF-8 bytes.' });

export const WebhookWithSecretSchema = Type.Object({ webhook: WebhookSchema, secret: SecretField });
export const WebhookOnlySchema = Type.Object({ webhook: WebhookSchema });
export const WebhookListSchema = Type.Object({ items: Type.Array(WebhookSchema, { description: 'Every webhook of the workspace, revoked ones included, oldest first.' }) });

export const CreateWebhookBody = Type.Object(
  { url: UrlField, eventTypes: EventTypesField, enabled: Type.Optional(Type.Boolean({ default: true, description: 'Default true.' })) },
  strict,
);
export type CreateWebhookBodyT = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object(
  { url: Type.Optional(UrlField), eventTypes: Type.Optional(EventTypesField), enabled: Type.Optional(Type.Boolean()) },
  { ...strict, minProperties: 1, description: 'Any non-empty subset of url, eventTypes and enabled.' },
);
export type UpdateWebhookBodyT = Static<typeof UpdateWebhookBody>;

/** revoke and rotate take no body: nothing, an empty body or `{}`. */
export const NoBody = Type.Union([Type.Object({}, strict), Type.Null()]);

const errorResponse = (description: string) => ({ ...ErrorBodySchema, description });

export const UrlRejected = errorResponse(
  'WEBHOOK_URL_REJECTED (details.reason: TOO_LONG, INVALID_URL, NOT_HTTPS, USERINFO_NOT_ALLOWED, FRAGMENT_NOT_ALLOWED, DOMAIN_NOT_VERIFIED, ADDRESS_NOT_PERMITTED, UNRESOLVABLE) or INVALID_REQUEST (malformed body, unknown or repeated event types).',
);
export const BadRequest = errorResponse('INVALID_REQUEST: malformed path id or body.');
export const NotFound = errorResponse("NOT_FOUND: no such webhook in the selected workspace (also for another workspace's id).");
export const Revoked = errorResponse('WEBHOOK_REVOKED: the webhook is revoked.');
export const LimitReached = errorResponse(`WEBHOOK_LIMIT_REACHED: the workspace already has ${MAX_ACTIVE_WEBHOOKS} active (unrevoked) webhooks.`);
