/**
 * Declaring a console API route: the public envelope with the route's code and message, TypeBox
 * schemas for the path, query and body, and the console's own authentication (the session hook of
 * http.ts; the public API's key hook never runs: RouteMeta auth 'none'). Used by the console's
 * media and webhook routes.
 */
import type { Static, TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { envelopeSchema, ok } from '../http/envelope.js';
import { AppError } from '../http/errors.js';
import type { ConsoleSession } from './sessions.js';

export type ConsoleRequest<B, P, Q> = FastifyRequest<{ Body: B; Params: P; Querystring: Q }>;

export interface ConsoleRouteSchemas<B extends TSchema, P extends TSchema, Q extends TSchema, R extends TSchema> {
  body?: B;
  params?: P;
  querystring?: Q;
  response: R;
}

/** The signed-in session of a console request (set by the console's onRequest hook). */
export function sessionOf(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw new AppError('UNAUTHENTICATED');
  return request.consoleSession;
}

export function consoleRoute<B extends TSchema, P extends TSchema, Q extends TSchema, R extends TSchema>(
  app: FastifyInstance,
  method: 'GET' | 'POST',
  url: string,
  meta: { code: string; message: string },
  schemas: ConsoleRouteSchemas<B, P, Q, R>,
  handler: (request: ConsoleRequest<Static<B>, Static<P>, Static<Q>>, reply: FastifyReply) => Promise<unknown>,
): void {
  app.route({
    method,
    url,
    schema: {
      hide: true,
      ...(schemas.body ? { body: schemas.body } : {}),
      ...(schemas.params ? { params: schemas.params } : {}),
      ...(schemas.querystring ? { querystring: schemas.querystring } : {}),
      response: { 200: envelopeSchema(schemas.response) },
    },
    config: { meta: { code: meta.code, message: meta.message, auth: 'none' }, console: { public: false } },
    handler: async (request, reply) => ok(request, await handler(request as ConsoleRequest<Static<B>, Static<P>, Static<Q>>, reply)),
  });
}
