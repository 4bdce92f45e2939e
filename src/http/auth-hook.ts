/**
 * The request pipeline before any handler: for routes whose RouteMeta says `auth: 'key'` it
 * authenticates the key, authorizes workspace and scope, then charges the route's usage points
 * (or answers 429) and sets the RateLimit headers. Admin routes compare the admin token in
 * constant time. A refused request (401, 403, 429) writes nothing to the database, except the
 * rare suspension of an abusive key; test/auth.test.ts compares every table before and after.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { safeEqual, sha256Hex } from '../lib/crypto.js';
import { authenticateKey, authorize, recordAuthorizationFailure } from '../modules/auth/service.js';
import type { ApiKey, AuthContext } from '../modules/auth/types.js';
import { chargePoints, peekMinute, rateLimitHeaders } from '../modules/usage/service.js';
import { AppError, isAppError } from './errors.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
  }
}

/** The auth context of a key-authenticated route (set by the hook before the handler). */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('UNAUTHENTICATED');
  return request.auth;
}

/** The decoded query-string pairs of the raw URL (independent of the route's query schema). */
function queryPairs(url: string): [string, string][] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  return [...new URLSearchParams(url.slice(q + 1)).entries()];
}

export function registerAuthHook(app: FastifyInstance, deps: Deps): void {
  const adminTokenHash = deps.config.adminToken ? sha256Hex(deps.config.adminToken) : undefined;

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const meta = request.routeOptions.config.meta;
    if (!meta || meta.auth === 'none') return;
    if (meta.auth === 'admin') {
      const m = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
      if (!adminTokenHash || !m?.[1] || !safeEqual(sha256Hex(m[1]), adminTokenHash)) throw new AppError('UNAUTHENTICATED');
      return;
    }
    const key: ApiKey = await authenticateKey(deps, {
      authorization: request.headers.authorization,
      query: queryPairs(request.url),
    });
    try {
      request.auth = await authorize(deps, key, {
        workspaceHeader: request.headers['x-service-workspace'],
        scope: meta.scope,
        transport: 'rest',
        ip: request.ip,
      });
    } catch (err) {
      if (isAppError(err)) {
        const suspension = await recordAuthorizationFailure(deps, key, err);
        if (suspension) throw suspension;
      }
      throw err;
    }
    const now = deps.clock.now();
    const minute =
      typeof meta.points === 'number'
        ? await chargePoints(deps, request.auth.workspace, meta.points)
        : await peekMinute(deps, request.auth.workspace);
    reply.headers(rateLimitHeaders(now, minute));
  });
}
