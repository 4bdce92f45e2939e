/**
 * buildApp(deps): the Fastify instance with every route, hook and schema. It never listens;
 * main.ts does, and tests use `inject` or listen on an ephemeral port.
 */
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Deps } from './deps.js';
import { newId } from './lib/ids.js';
import { registerAuthHook } from './http/auth-hook.js';
import { errorBody, errorHandler } from './http/error-handler.js';
import { validatorCompiler } from './http/validation.js';
import { systemRoutes } from './http/system-routes.js';
import { workspaceRoutes } from './modules/accounts/routes.js';
import { usageRoutes } from './modules/usage/routes.js';
import { billingRoutes } from './modules/billing/routes.js';
import { adminRoutes } from './admin/routes.js';

export const API_VERSION = '1.0.0';

export interface BuildAppOptions {
  /** Log requests (off in tests). */
  logRequests?: boolean;
}

export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    disableRequestLogging: !options.logRequests,
    genReqId: () => newId(),
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    bodyLimit: 1024 * 1024,
    ajv: { customOptions: { removeAdditional: false } },
    return503OnClosing: true,
  });
  app.setValidatorCompiler(validatorCompiler);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(request, 'NOT_FOUND', 'Not found.')));

  app.addHook('onRequest', async (request, reply) => {
    reply.header('X-Request-Id', String(request.id));
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    deps.metrics.httpRequests.inc({ method: request.method, route, status: String(reply.statusCode) });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Automation Service Public API',
        version: API_VERSION,
        description: 'Every endpoint needs `Authorization: Bearer <API_KEY>` and `X-Service-Workspace: <workspace UUID>`.',
      },
      servers: [{ url: deps.config.publicBaseUrl }],
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearerAuth: [] }],
    },
    hideUntagged: true,
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { url: '/openapi.json' }, staticCSP: true });
  app.get('/openapi.json', { schema: { hide: true }, config: { meta: { code: 'OPENAPI', message: 'openapi', auth: 'none' } } }, async () => app.swagger());

  registerAuthHook(app, deps);
  const modules = [systemRoutes, workspaceRoutes, usageRoutes, billingRoutes];
  if (deps.config.adminToken) modules.push(adminRoutes);
  for (const routes of modules) await app.register(async (instance) => routes(instance, deps));
  return app;
}
