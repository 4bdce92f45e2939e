/** The response envelope of every success and every error (spec "Response envelope", decisions.md section 1). */
import { Type, type TSchema } from 'typebox';
import type { FastifyRequest } from 'fastify';

export function envelopeSchema<T extends TSchema>(data: T) {
  return Type.Object({
    success: Type.Literal(true),
    code: Type.String(),
    message: Type.String(),
    data,
  });
}

export const ErrorBodySchema = Type.Object({
  success: Type.Literal(false),
  code: Type.String(),
  message: Type.String(),
  requestId: Type.String(),
  details: Type.Optional(Type.Object({}, { additionalProperties: true })),
});

export interface Envelope<T> {
  success: true;
  code: string;
  message: string;
  data: T;
}

/** Wraps `data` in the envelope, with the route's declared code and message. */
export function ok<T>(request: FastifyRequest, data: T): Envelope<T> {
  // routeMeta is set by the auth hook; routeOptions builds a new object on every access.
  const meta = request.routeMeta ?? request.routeOptions.config.meta;
  return { success: true, code: meta?.code ?? 'OK', message: meta?.message ?? 'OK', data };
}
