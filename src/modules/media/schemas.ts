/** A media item as the API answers it, shared by the media routes and the event payloads. */
import { Type } from 'typebox';
import { Livemode, Timestamp, Uuid } from '../../http/schemas.js';

export const MediaItemSchema = Type.Object({
  id: Uuid,
  workspaceId: Uuid,
  livemode: Livemode,
  name: Type.String({ description: 'The uploaded filename, stripped of any path and control characters.' }),
  mimeType: Type.String(),
  sizeBytes: Type.Integer({ minimum: 0 }),
  sha256: Type.String({ description: 'Hex SHA-256 of the stored bytes.' }),
  createdAt: Timestamp,
  downloadUrl: Type.Union([Type.String(), Type.Null()], { description: 'Always null here; use the download endpoint.' }),
});
