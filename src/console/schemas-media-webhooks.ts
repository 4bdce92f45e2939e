/** Request and response schemas of the console's media, domain and webhook endpoints, built from the public and admin APIs' own. */
import { Type } from 'typebox';
import { Timestamp, Uuid } from '../http/schemas.js';
import { PageQuerySchema } from '../http/pagination.js';
import * as AS from '../admin/schemas.js';
import { MediaItemSchema } from '../modules/media/schemas.js';
import * as WS from '../modules/webhooks/schemas.js';
import { DeliverySchema } from '../modules/webhooks/delivery-routes.js';

const strict = { additionalProperties: false } as const;

export const PageQuery = PageQuerySchema;
/** `live` (default) or `test`: the workspace's test media and webhooks (the console's test-mode switch; decisions.md "Test mode"). */
const Mode = Type.Union([Type.Literal('live'), Type.Literal('test')]);
export const ModeQuery = Type.Object({ mode: Type.Optional(Mode) }, strict);
export const ModePageQuery = Type.Object({ ...PageQuerySchema.properties, mode: Type.Optional(Mode) }, strict);
export const WorkspaceParams = Type.Object({ workspaceId: Uuid }, strict);
export const MediaParams = Type.Object({ workspaceId: Uuid, mediaId: Uuid }, strict);
export const WebhookParams = Type.Object({ workspaceId: Uuid, webhookId: Uuid }, strict);
export const DeliveryParams = Type.Object({ workspaceId: Uuid, webhookId: Uuid, deliveryId: Uuid }, strict);
export const HostnameParams = Type.Object({ workspaceId: Uuid, hostname: AS.HostnameParams.properties.hostname }, strict);

/** A media item with a signed URL for its preview and download (the one GET /v1/media/{id}/download issues). */
export const ConsoleMediaItemSchema = Type.Object({
  ...MediaItemSchema.properties,
  downloadUrl: Type.String({ description: 'Signed URL; works without a key or session until downloadUrlExpiresAt.' }),
  downloadUrlExpiresAt: Timestamp,
});
export const MediaListSchema = Type.Object({
  items: Type.Array(ConsoleMediaItemSchema),
  nextCursor: Type.Union([Type.String(), Type.Null()]),
  /** The plan's largest upload, in bytes (the form says so before a file is sent). */
  maxUploadBytes: Type.Integer(),
  /** The accepted types (MIME type and file extension), as the upload checks them. */
  acceptedTypes: Type.Array(Type.Object({ mimeType: Type.String(), extension: Type.String() })),
});
export const MediaOnlySchema = Type.Object({ media: MediaItemSchema });
export const DownloadSchema = Type.Object({ mediaId: Uuid, url: Type.String(), expiresAt: Timestamp });

/** An owner proves control by a DNS TXT record or an HTTPS file; the operator's word is the admin API's alone. */
export const AddDomainBody = AS.AddDomainBody;
export const CheckDomainBody = Type.Object({ method: Type.Union([Type.Literal('dns'), Type.Literal('http')]) }, strict);
export const DomainSchema = Type.Object({
  ...AS.DomainSchema.properties,
  /** Where the proof goes: the TXT record's name and the file's URL, both holding verificationToken. */
  dnsRecordName: Type.String(),
  httpFileUrl: Type.String(),
});
export const DomainListSchema = Type.Object({ items: Type.Array(DomainSchema), canManage: Type.Boolean() });
export const DomainOnlySchema = Type.Object({ domain: DomainSchema });

export const CreateWebhookBody = WS.CreateWebhookBody;
export const NoBody = WS.NoBody;
export const WebhookListSchema = Type.Object({
  items: WS.WebhookListSchema.properties.items,
  /** Event types a webhook may subscribe to (the create form's choices). */
  eventTypes: Type.Array(Type.String()),
  /** Whether this user may change the workspace's domains and webhooks (owner or admin). */
  canManage: Type.Boolean(),
});
export const WebhookWithSecretSchema = WS.WebhookWithSecretSchema;
export const WebhookOnlySchema = WS.WebhookOnlySchema;
export const DeliveryListSchema = Type.Object({ items: Type.Array(DeliverySchema), nextCursor: Type.Union([Type.String(), Type.Null()]), hasMore: Type.Boolean() });
export const DeliveryOnlySchema = Type.Object({ delivery: DeliverySchema });
