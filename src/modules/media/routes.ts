/**
 * The media library's public routes: POST /v1/media/upload, GET /v1/media, GET /v1/media/{id},
 * GET /v1/media/{id}/download; and the key-less target of local signed URLs (download-route.ts).
 * Multipart parsing is registered in this plugin only, so no other route accepts it.
 */
import multipart from '@fastify/multipart';
import { Type } from 'typebox';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';
import { requireAuth } from '../../http/auth-hook.js';
import { ErrorBodySchema, envelopeSchema, ok } from '../../http/envelope.js';
import { PageQuerySchema, type PageQuery } from '../../http/pagination.js';
import { IdParams, Timestamp, Uuid, WorkspaceHeaders } from '../../http/schemas.js';
import { toIso } from '../../lib/clock.js';
import { registerDownloadRoute } from './download-route.js';
import { MediaItemSchema } from './schemas.js';
import { mediaLimitsFor } from './limits.js';
import { getMediaItem, listMedia, mediaDownload, presentMedia, storeUploadedMedia } from './service.js';
import { receiveUpload } from './upload-receiver.js';

const DownloadSchema = Type.Object({
  mediaId: Uuid,
  url: Type.String({ description: 'Signed URL; works without the API key until expiresAt.' }),
  expiresAt: Timestamp,
});

/** Documents the multipart body without validating it (the parts are streamed, not parsed into a body). */
const UploadBody = {
  content: {
    'multipart/form-data': {
      schema: {
        properties: { file: { type: 'string', format: 'binary', description: 'The file. Its Content-Type must match the content.' } },
        required: ['file'],
      },
    },
  },
};

const MediaParams = IdParams('mediaId');

const errorResponse = (description: string) => ({ ...ErrorBodySchema, description });
const NotFound = errorResponse('NOT_FOUND: no such media item in the selected workspace (also for another workspace\'s id).');

export async function mediaRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(multipart, { throwFileSizeLimit: true });

  app.post(
    '/v1/media/upload',
    {
      schema: {
        tags: ['media'],
        summary: 'Upload a media file',
        description:
          'multipart/form-data with exactly one file part named `file`. Accepted: PNG, JPEG, WebP, GIF, MP3, WAV, Ogg audio, MP4, WebM, GLB; ' +
          'the content must match the declared type. Largest upload and storage quota depend on the plan ' +
          '(free 25 MiB / 500 MiB, starter 100 MiB / 10 GiB, pro 250 MiB / 100 GiB).',
        headers: WorkspaceHeaders,
        body: UploadBody,
        response: {
          200: envelopeSchema(MediaItemSchema),
          400: errorResponse(
            'UNSUPPORTED_MEDIA (details.reason: EMPTY, TYPE_NOT_ALLOWED, TYPE_MISMATCH, SVG_NOT_ALLOWED, EXECUTABLE, MALFORMED, TRAILING_DATA, EMBEDDED_MARKUP, PIXEL_LIMIT) or INVALID_REQUEST (not exactly one file part named file).',
          ),
          413: errorResponse('PAYLOAD_TOO_LARGE (over the plan\'s largest upload) or STORAGE_QUOTA_EXCEEDED.'),
          507: errorResponse('STORAGE_FULL: the server\'s storage is full (details.storage: files or database); nothing was stored. Retry once the operator has freed space.'),
        },
      },
      config: { meta: { code: 'PUBLIC_MEDIA_UPLOAD', message: 'Media uploaded.', auth: 'key', scope: 'media:write', points: 10 } },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { maxUploadBytes } = mediaLimitsFor(auth.workspace.plan);
      // A refusal before the whole body arrived reaches the client (http/unread-body.ts).
      const staged = await receiveUpload(request, deps.blobs.stagingDir, maxUploadBytes);
      const item = await storeUploadedMedia(deps, auth.workspace, staged);
      return ok(request, presentMedia(item));
    },
  );

  app.get<{ Querystring: PageQuery }>(
    '/v1/media',
    {
      schema: {
        tags: ['media'],
        summary: 'List the media library, newest first',
        headers: WorkspaceHeaders,
        querystring: PageQuerySchema,
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(MediaItemSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })) },
      },
      config: { meta: { code: 'PUBLIC_MEDIA_LIST', message: 'Media listed.', auth: 'key', scope: 'media:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      const page = await listMedia(deps, auth.workspace.id, { limit: request.query.limit ?? 25, cursor: request.query.cursor });
      return ok(request, { items: page.items.map(presentMedia), nextCursor: page.nextCursor });
    },
  );

  app.get<{ Params: { mediaId: string } }>(
    '/v1/media/:mediaId',
    {
      schema: { tags: ['media'], summary: 'Read one media item', headers: WorkspaceHeaders, params: MediaParams, response: { 200: envelopeSchema(MediaItemSchema), 404: NotFound } },
      config: { meta: { code: 'PUBLIC_MEDIA_GET', message: 'Media item read.', auth: 'key', scope: 'media:read', points: 1 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      return ok(request, presentMedia(await getMediaItem(deps, auth.workspace.id, request.params.mediaId)));
    },
  );

  app.get<{ Params: { mediaId: string } }>(
    '/v1/media/:mediaId/download',
    {
      schema: {
        tags: ['media'],
        summary: 'A temporary signed download URL',
        description: `The URL needs no API key and stops working at expiresAt (after MEDIA_URL_TTL_S, default 15 minutes); request a new one then.`,
        headers: WorkspaceHeaders,
        params: MediaParams,
        response: { 200: envelopeSchema(DownloadSchema), 404: NotFound },
      },
      config: { meta: { code: 'PUBLIC_MEDIA_DOWNLOAD', message: 'Download URL issued.', auth: 'key', scope: 'media:read', points: 2 } },
    },
    async (request) => {
      const auth = requireAuth(request);
      const d = await mediaDownload(deps, auth.workspace.id, request.params.mediaId);
      return ok(request, { mediaId: d.mediaId, url: d.url, expiresAt: toIso(d.expiresAt) });
    },
  );

  registerDownloadRoute(app, deps);
}
