/**
 * What every route declares besides its schemas: the response code constant, who may call it, the
 * scope it needs and the usage points it costs. Hooks read it from `routeOptions.config.meta`.
 */
import type { Scope } from '../modules/auth/scopes.js';

export type RouteAuth = 'key' | 'admin' | 'none';

export interface RouteMeta {
  /** The envelope `code` of a successful response, e.g. PUBLIC_USAGE_GET. */
  code: string;
  /** Human-readable `message` of a successful response. */
  message: string;
  auth: RouteAuth;
  scope?: Scope;
  /**
   * Usage points charged before the handler runs, or 'service' when the service charges them
   * itself (runs and retries: the weight depends on the operation and on idempotent replay).
   */
  points?: number | 'service';
  /**
   * Error statuses this route answers beyond those every key route documents (400, 401, 403,
   * 404, 409, 429), for /openapi.json: status → the codes and when.
   */
  errors?: Record<number, string>;
  /**
   * Documentation-only schemas for /openapi.json that replace the validating ones: a body or a
   * success response that depends on the operation (openapi-operations.ts). They never validate.
   */
  document?: { body?: unknown; responses?: Record<number, unknown> };
}

declare module 'fastify' {
  interface FastifyContextConfig {
    meta?: RouteMeta;
  }
}
