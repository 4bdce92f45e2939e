/**
 * The console's media endpoints (issue 35, item 7), on the media library's own service: the
 * upload goes through the very functions POST /v1/media/upload calls (receiveUpload with the
 * plan's largest upload, then storeUploadedMedia: type sniffing, content checks, storage quota,
 * the same error codes), the list is listMedia, downloads are signedMediaUrl/mediaDownload.
 *
 * - GET  /console/api/workspaces/{id}/media?limit&cursor   CONSOLE_MEDIA_LIST
 * - POST /console/api/workspaces/{id}/media/upload          CONSOLE_MEDIA_UPLOAD (multipart, one part `file`)
 * - GET  /console/api/workspaces/{id}/media/{mediaId}/download  CONSOLE_MEDIA_DOWNLOAD
 *
 * Multipart parsing is registered in this plugin only, so no other console route accepts it.
 * Every route takes `mode` (query; `test`: the workspace's test media, which test-key runs read).
 */
import multipart from '@fastify/multipart';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { toIso } from '../lib/clock.js';
import { MEDIA_FORMATS } from '../modules/media/formats.js';
import { mediaLimitsFor } from '../modules/media/limits.js';
import { listMedia, mediaDownload, presentMedia, signedMediaUrl, storeUploadedMedia } from '../modules/media/service.js';
import { receiveUpload } from '../modules/media/upload-receiver.js';
import { consoleRoute, sessionOf } from './routes-define.js';
import * as M from './schemas-media-webhooks.js';
import { inMode, readableWorkspace } from './service-webhooks.js';

const base = '/console/api/workspaces/:workspaceId/media';
const ACCEPTED = Object.values(MEDIA_FORMATS).map((f) => ({ mimeType: f.mimeType, extension: f.extension }));

/**
 * Origins other than the service's own where signed media URLs point (the S3 bucket's), which the
 * pages' Content-Security-Policy must allow for previews. Found by signing a URL, which for either
 * store is a local computation (an HMAC, or an S3 presignature).
 */
export async function signedMediaOrigins(deps: Deps): Promise<string[]> {
  const zero = '00000000-0000-4000-8000-000000000000';
  const { url } = await signedMediaUrl(deps, { id: zero, workspaceId: zero }, deps.clock.now());
  const origin = new URL(url).origin;
  return origin === new URL(deps.config.publicBaseUrl).origin ? [] : [origin];
}

export async function consoleMediaRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  consoleRoute(app, 'GET', base, { code: 'CONSOLE_MEDIA_LIST', message: 'Media of the workspace, newest first.' }, { params: M.WorkspaceParams, querystring: M.ModePageQuery, response: M.MediaListSchema }, async (r) => {
    const { workspace: live } = await readableWorkspace(deps, sessionOf(r).user.id, r.params.workspaceId);
    const workspace = await inMode(deps, live, r.query.mode);
    const page = await listMedia(deps, workspace.id, { limit: r.query.limit ?? 25, cursor: r.query.cursor });
    const signedAt = deps.clock.now();
    const items = await Promise.all(
      page.items.map(async (item) => {
        const { url, expiresAt } = await signedMediaUrl(deps, item, signedAt);
        return { ...presentMedia(item), downloadUrl: url, downloadUrlExpiresAt: toIso(expiresAt) };
      }),
    );
    return { items, nextCursor: page.nextCursor, maxUploadBytes: mediaLimitsFor(workspace.plan).maxUploadBytes, acceptedTypes: ACCEPTED };
  });

  consoleRoute(app, 'GET', `${base}/:mediaId/download`, { code: 'CONSOLE_MEDIA_DOWNLOAD', message: 'Download URL issued.' }, { params: M.MediaParams, querystring: M.ModeQuery, response: M.DownloadSchema }, async (r) => {
    const { workspace: live } = await readableWorkspace(deps, sessionOf(r).user.id, r.params.workspaceId);
    const workspace = await inMode(deps, live, r.query.mode);
    const d = await mediaDownload(deps, workspace.id, r.params.mediaId);
    return { mediaId: d.mediaId, url: d.url, expiresAt: toIso(d.expiresAt) };
  });

  await app.register(async (uploads) => {
    await uploads.register(multipart, { throwFileSizeLimit: true });
    consoleRoute(uploads, 'POST', `${base}/upload`, { code: 'CONSOLE_MEDIA_UPLOAD', message: 'Media uploaded.' }, { params: M.WorkspaceParams, querystring: M.ModeQuery, response: M.MediaOnlySchema }, async (r) => {
      // The workspace is checked before a byte of the body is read; a refusal before the body
      // ends still reaches the client (http/unread-body.ts), as on the public upload.
      const { workspace: live } = await readableWorkspace(deps, sessionOf(r).user.id, r.params.workspaceId);
      const workspace = await inMode(deps, live, r.query.mode, true);
      const staged = await receiveUpload(r, deps.blobs.stagingDir, mediaLimitsFor(workspace.plan).maxUploadBytes);
      return { media: presentMedia(await storeUploadedMedia(deps, workspace, staged)) };
    });
  });
}
