/**
 * The catalogue of an app's routes as registered: method, URL pattern, RouteMeta and schemas. The
 * MCP transport derives its tools from it and the tests check that every public route is
 * documented; it lives here, not in app.ts, so that neither imports the app that mounts them.
 */
import type { FastifyInstance } from 'fastify';
import type { RouteMeta } from './route-meta.js';

/** A route as registered, for checks that every public route is documented. */
export interface RouteEntry {
  method: string;
  url: string;
  meta: RouteMeta | undefined;
  /** The route's request and response schemas as declared (the MCP tools derive their inputs from them). */
  schema?: Record<string, unknown>;
}

const routeCatalogs = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Records every route registered on `app` from now on (HEAD twins excluded). */
export function catalogueRoutes(app: FastifyInstance): void {
  const catalog: RouteEntry[] = [];
  routeCatalogs.set(app, catalog);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === 'HEAD') continue;
      catalog.push({ method, url: route.url, meta: (route.config as { meta?: RouteMeta } | undefined)?.meta, schema: route.schema as Record<string, unknown> | undefined });
    }
  });
}

/** Every route registered on an app built by buildApp (HEAD twins excluded). */
export function listRoutes(app: FastifyInstance): RouteEntry[] {
  return [...(routeCatalogs.get(app) ?? [])];
}
