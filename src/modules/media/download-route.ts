/**
 * GET /media-files/{workspaceId}/{mediaId}?expires=…&token=… : the target of signed download URLs
 * of the local store. No API key: the HMAC token is the credential. It is checked before the
 * database is touched; a forged, altered or expired URL is 403 FORBIDDEN, an extra query
 * parameter too (a URL is used exactly as issued). The bytes are served with their stored
 * Content-Type and Content-Length, `Accept-Ranges: bytes` and single-range support (206/416),
 * and headers that keep a browser from running anything (nosniff, a sandboxing CSP).
 * Not part of the public API document.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { isUuid } from '../../lib/ids.js';
import { scopeOfUrlSegment } from '../../lib/livemode.js';
import * as store from './store.js';
import { DOWNLOAD_PREFIX, verifyDownloadToken } from './signing.js';

/** A single `bytes=` range of a `size`-byte body; undefined = serve it whole; 'unsatisfiable' = 416. */
export function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  // Multiple ranges and other units are allowed to be ignored (RFC 9110 §14.2): send it whole.
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return 'unsatisfiable';
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  if (start >= size || end < start) return 'unsatisfiable';
  return { start, end };
}

function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  return `inline; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

const refused = () => new AppError('FORBIDDEN', { message: 'The download link is invalid or has expired; request a new one.' });

export function registerDownloadRoute(app: FastifyInstance, deps: Deps): void {
  // GET and HEAD explicitly: Fastify's automatic HEAD twin would read the whole file to discard it.
  app.route<{ Params: { workspaceId: string; mediaId: string }; Querystring: Record<string, string> }>({
    method: ['GET', 'HEAD'],
    url: `${DOWNLOAD_PREFIX}/:workspaceId/:mediaId`,
    schema: { hide: true },
    config: { meta: { code: 'MEDIA_FILE', message: 'Media file.', auth: 'none' } },
    handler: async (request: FastifyRequest<{ Params: { workspaceId: string; mediaId: string }; Querystring: Record<string, string> }>, reply: FastifyReply) => {
      const { mediaId } = request.params;
      // The scope the path names (a test twin as `test-{live id}`, lib/livemode.ts).
      const workspaceId = scopeOfUrlSegment(request.params.workspaceId, isUuid) ?? '';
      const query = request.query;
      const names = Object.keys(query);
      const expires = query.expires;
      const token = query.token;
      if (names.length !== 2 || typeof expires !== 'string' || typeof token !== 'string') throw refused();
      if (!workspaceId || !isUuid(mediaId) || !verifyDownloadToken(deps.keyring, workspaceId, mediaId, expires, token)) throw refused();
      if (deps.clock.now() >= Number(expires)) throw refused();
      const item = await store.findMedia(deps.db, workspaceId, mediaId);
      const size = item ? await deps.blobs.stat(item.storageKey) : undefined;
      if (!item || size === undefined) throw new AppError('NOT_FOUND');

      const ifRange = request.headers['if-range'];
      const range = ifRange === undefined || ifRange === `"${item.sha256}"` ? parseRange(request.headers.range, size) : undefined;
      if (range === 'unsatisfiable') throw new AppError('RANGE_NOT_SATISFIABLE', { headers: { 'Content-Range': `bytes */${size}` } });

      reply.header('Content-Type', item.mimeType);
      reply.header('Accept-Ranges', 'bytes');
      reply.header('ETag', `"${item.sha256}"`);
      reply.header('Cache-Control', `private, max-age=${Math.max(0, Math.floor((Number(expires) - deps.clock.now()) / 1000))}`);
      reply.header('Content-Disposition', contentDisposition(item.name));
      reply.header('X-Content-Type-Options', 'nosniff');
      reply.header('Content-Security-Policy', "default-src 'none'; sandbox");
      if (range) {
        reply.status(206);
        reply.header('Content-Range', `bytes ${range.start}-${range.end}/${size}`);
        reply.header('Content-Length', String(range.end - range.start + 1));
      } else {
        reply.header('Content-Length', String(size));
      }
      if (request.method === 'HEAD') return reply.send();
      return reply.send(await deps.blobs.read(item.storageKey, range));
    },
  });
}
