/**
 * buildApp(deps): the Fastify instance with every route, hook and schema. It never listens;
 * main.ts does, and tests use `inject` or listen on an ephemeral port.
 *
 * Cross-cutting HTTP behaviour lives here: X-Request-Id on every response (404s and framework
 * errors included), one request-log line per request with secrets stripped from the URL,
 * Prometheus counters, body parsing (JSON only; an empty JSON body counts as no body), and the
 * OpenAPI document built from the route schemas (only key-authenticated /v1 routes appear).
 */
import Fastify, {
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { Deps } from './deps.js';
import { newId } from './lib/ids.js';
import { requestLoggerFor } from './lib/logging.js';
import { lazyChildLogger, RequestLogController } from './http/request-log.js';

export { redactUrl } from './http/request-log.js';
import { mcpEndpoint } from './mcp/endpoint.js';
import { decorateSynchronousJobObserver } from './mcp/internal.js';
import { registerAuthHook } from './http/auth-hook.js';
import { ErrorBodySchema } from './http/envelope.js';
import { operationComponentSchemas } from './http/openapi-operations.js';
import { errorBody, errorHandler, prototypeKeyRefusal } from './http/error-handler.js';
import { jsonBodyParser } from './http/json-body.js';
import { AppError } from './http/errors.js';
import type { RouteMeta } from './http/route-meta.js';
import { validatorCompiler } from './http/validation.js';
import { lazySerializerFactory, lazyValidatorCompiler } from './http/lazy-compilers.js';
import { systemRoutes } from './http/system-routes.js';
import { catalogueRoutes } from './http/route-catalogue.js';
import { ConnectionDrain } from './http/connection-drain.js';
import { registerUnreadBodyHook } from './http/unread-body.js';
import { workspaceRoutes } from './modules/accounts/routes.js';
import { usageRoutes } from './modules/usage/routes.js';
import { billingRoutes } from './modules/billing/routes.js';
import { costRoutes } from './modules/costs/routes.js';
import { OPERATION_IDS } from './operations/ids.js';
import { mediaRoutes } from './modules/media/routes.js';
import { voiceRoutes } from './modules/voices/routes.js';
import { adminRoutes } from './admin/routes.js';
import { toolRoutes } from './modules/tools/routes.js';
import { runRoutes } from './modules/runs/routes.js';
import { jobRoutes } from './modules/jobs/routes.js';
import { streamRoutes } from './modules/jobs/stream-routes.js';
import { eventRoutes } from './modules/events/routes.js';
import { webhookRoutes } from './modules/webhooks/routes.js';
import { deliveryRoutes } from './modules/webhooks/delivery-routes.js';
import { consoleRoutes } from './console/routes.js';

export const API_VERSION = '1.0.0';
export const BODY_LIMIT_BYTES = 1024 * 1024;

export interface BuildAppOptions {
  /** Log one line per request (off in tests). */
  logRequests?: boolean;
}

/** Request ids are ids (lib/ids.ts): UUIDv7, unique across processes. */
export const requestId = newId;

/** OpenAPI operation details drawn from a route's RouteMeta: security, scope, points, errors. */
function documentRoute(schema: Record<string, unknown> | undefined, url: string, meta: RouteMeta | undefined, method: string | string[]): Record<string, unknown> {
  if (!schema || !url.startsWith('/v1/') || meta?.auth !== 'key') return { ...schema, hide: true };
  const points = typeof meta.points === 'number' ? `${meta.points} usage point${meta.points === 1 ? '' : 's'}` : 'usage points that depend on the operation';
  const error = (description: string) => ({ ...ErrorBodySchema, description });
  const responses = { ...(schema.response as Record<string, Record<string, unknown>> | undefined), ...(meta.document?.responses as Record<string, Record<string, unknown>> | undefined) };
  for (const status of ['200', '202']) {
    const success = responses[status];
    if (success && !success.description) responses[status] = { ...success, description: meta.message };
  }
  return {
    ...schema,
    operationId: meta.code,
    description: [schema.description, `Scope: \`${meta.scope ?? 'none'}\`. Costs ${points}. Success code: \`${meta.code}\`.`].filter(Boolean).join('\n\n'),
    security: [{ bearerAuth: [] }],
    ...(schema.headers ? { headers: requireIdempotencyKey(schema.headers) } : {}),
    ...(meta.document?.body ? { body: meta.document.body } : {}),
    response: {
      400: error('INVALID_REQUEST: malformed header, query or body.'),
      401: error('UNAUTHENTICATED: missing, malformed, unknown, revoked or expired key, or a key in the query string.'),
      403: error('FORBIDDEN_SCOPE, FORBIDDEN_WORKSPACE, FORBIDDEN_IP, FORBIDDEN_TRANSPORT, KEY_SUSPENDED, or a rule of this endpoint (FORBIDDEN_OPERATION, PLAN_REQUIRED).'),
      404: error('NOT_FOUND: no such resource in the selected workspace (another workspace’s resources are never revealed).'),
      409: error('A conflict with the current state: a reused Idempotency-Key (IDEMPOTENCY_CONFLICT, IDEMPOTENCY_IN_PROGRESS), or a rule of this endpoint.'),
      429: error('RATE_LIMITED (usage points; see Retry-After and details.limit).'),
      // A JSON body over the body limit is refused before validation (error-handler.ts), on every route that takes one.
      ...(schema.body || meta.document?.body ? { 413: error('PAYLOAD_TOO_LARGE: the request body is over the size limit.') } : {}),
      // Any request: the server is stopping, or its database cannot be reached (db/unavailable.ts).
      503: error('UNAVAILABLE: the server is shutting down, or its database cannot be reached (details.reason DATABASE_UNAVAILABLE); retry after Retry-After.'),
      // Any request that writes, when the server's storage is full (lib/storage-full.ts).
      ...([method].flat().some((m) => m !== 'GET' && m !== 'HEAD') ? { 507: error("STORAGE_FULL: the server's storage is full (details.storage: files or database); nothing was stored.") } : {}),
      ...Object.fromEntries(Object.entries(meta.errors ?? {}).map(([status, text]) => [status, error(text)])),
      ...responses,
    },
  };
}

/**
 * The headers schema as documented: `Idempotency-Key` is required wherever it appears. Routes
 * declare it optional so that its absence reaches the service, which answers the specific 400
 * IDEMPOTENCY_KEY_REQUIRED (with its usage point) instead of a generic INVALID_REQUEST.
 */
function requireIdempotencyKey(headers: unknown): unknown {
  if (Array.isArray(headers)) return headers.map(requireIdempotencyKey);
  if (!headers || typeof headers !== 'object') return headers;
  const copy: Record<string, unknown> = { ...(headers as Record<string, unknown>) };
  if (Array.isArray(copy.allOf)) copy.allOf = copy.allOf.map(requireIdempotencyKey);
  const properties = copy.properties as Record<string, unknown> | undefined;
  if (properties && 'idempotency-key' in properties) {
    const required = Array.isArray(copy.required) ? (copy.required as string[]) : [];
    if (!required.includes('idempotency-key')) copy.required = [...required, 'idempotency-key'];
  }
  return copy;
}

/** What a 429 is counted under in the usage history: a run's operation when known, else the endpoint. */
function refusedOperation(request: FastifyRequest, route: string): string {
  const body = request.body as { operationId?: unknown } | undefined;
  if (route === '/v1/runs' && typeof body?.operationId === 'string' && (OPERATION_IDS as string[]).includes(body.operationId)) return body.operationId;
  return `${request.method} ${route}`;
}

export async function buildApp(deps: Deps, options: BuildAppOptions = {}): Promise<FastifyInstance> {
  let closing = false;
  const app: FastifyInstance = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Metrics and connection draining ride on the completion callback Fastify makes for every
    // response anyway, which saves an onResponse hook on every request.
    logController: new RequestLogController({ disableRequestLogging: !options.logRequests, requestIdLogLabel: 'requestId' }, deps.log, requestLoggerFor(deps.log), (request, reply, route) => {
      deps.metrics.observeRequest(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
      if (reply.statusCode === 429) {
        const refusal = request.tooManyRequests;
        deps.metrics.observeTooManyRequests(refusal?.code ?? 'unknown', refusal?.details?.limit);
        // Per key and operation in the usage history (GET /v1/usage/history; modules/usage/history.ts).
        const auth = request.auth;
        if (auth) deps.usage.history.refused(auth.workspace.id, deps.clock.now(), { keyId: auth.key.id, operation: refusedOperation(request, route) }, refusal?.details?.limit);
      }
      // While draining, a keep-alive connection whose request just finished is idle now: close
      // it, so a client cannot hold the closing server open (server.close() only reaps the
      // connections that were idle when it was called).
      if (closing) setImmediate(() => app.server.closeIdleConnections());
    }),
    genReqId: requestId,
    childLoggerFactory: lazyChildLogger,
    // Response serializers compile on their route's first use (http/lazy-compilers.ts).
    schemaController: { compilersFactory: { buildSerializer: lazySerializerFactory } },
    trustProxy: deps.config.trustedProxies.length > 0 ? deps.config.trustedProxies : false,
    bodyLimit: BODY_LIMIT_BYTES,
    // Path parameters up to 512 characters: a domain's hostname (up to 253) is one, in the admin
    // API's verify and remove paths. The router's default of 100 refused hostnames it had accepted.
    routerOptions: { maxParamLength: 512 },
    // Requests that arrive while the server drains get our 503 envelope (hook below), not Fastify's.
    return503OnClosing: false,
    // Malformed URLs (bad percent-encoding, over-long parameters) get the same envelope as the rest.
    frameworkErrors: (err: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
      reply.header('X-Request-Id', String(request.id));
      errorHandler(err, request, reply);
    },
  });
  catalogueRoutes(app);
  // Set when a request is refused with 429 (http/refusal.ts): declared up front so every request has the same shape.
  app.decorateRequest('tooManyRequests', undefined);

  app.setValidatorCompiler(lazyValidatorCompiler(validatorCompiler));
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((request, reply) => reply.status(404).send(errorBody(request, 'NOT_FOUND', 'Not found.')));

  // JSON is the only body format (routes needing others register their own parser). An empty
  // JSON body means "no body", so `POST …/revoke` with a Content-Type header but nothing else works.
  // A body holding a "__proto__" key, or a "constructor" key with "prototype", is refused whole;
  // the refusal says so rather than calling well-formed JSON invalid (the MCP endpoint reads such a
  // message without those keys instead: mcp/endpoint.ts).
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, jsonBodyParser(app, () => ({ refuse: prototypeKeyRefusal() })));

  // Callback-style hooks: on the hot path they are cheaper than async ones.
  const drain = new ConnectionDrain(app.server);
  app.addHook('preClose', (done) => {
    closing = true;
    drain.start();
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('X-Request-Id', request.id);
    if (closing) return done(new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 }));
    done();
  });

  await registerOpenApi(app, deps);
  await registerRoutes(app, deps);
  return app;
}

/** /openapi.json (generated from the routes' own schemas) and the /docs page that renders it. */
async function registerOpenApi(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Workspace Automation Service Public API',
        version: API_VERSION,
        description:
          'Every endpoint needs `Authorization: Bearer <API_KEY>` and `X-Service-Workspace: <workspace UUID>`. ' +
          'Responses use the envelope `{success, code, message, data}`; errors are `{success:false, code, message, requestId, details?}`. ' +
          'Every response carries `X-Request-Id`; authenticated responses carry `RateLimit-Limit`, `RateLimit-Remaining` and `RateLimit-Reset`.',
      },
      servers: [{ url: deps.config.publicBaseUrl }],
      components: {
        securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An API key (wask_…) issued by the operator.' } },
        // Each operation's input, result and request body (the `input` of estimates and runs, the
        // `result` of a run and the complete output of its job), whatever provider runs it.
        schemas: operationComponentSchemas(),
      },
      security: [{ bearerAuth: [] }],
    },
    // Only key-authenticated /v1 routes are public; admin, system and docs routes stay out.
    transform: ({ schema, url, route }) => ({
      schema: documentRoute(schema as Record<string, unknown> | undefined, url, (route.config as { meta?: RouteMeta } | undefined)?.meta, route.method) as typeof schema,
      url,
    }),
  });
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { url: '/openapi.json', validatorUrl: null },
    // Same-origin only, and no `upgrade-insecure-requests`: a plain-http self-hosted instance
    // must still load the page's own scripts and styles. The one <style> element Swagger UI's
    // bundle inserts is allowed by its hash (no 'unsafe-inline'); test/http/docs-page.test.ts
    // loads the page in Chromium and fails on any violation, so a new bundle's style shows up.
    staticCSP:
      "default-src 'self'; base-uri 'self'; font-src 'self' data:; frame-ancestors 'self'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; " +
      "style-src 'self' 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='",
  });
  app.get('/openapi.json', { schema: { hide: true }, config: { meta: { code: 'OPENAPI', message: 'openapi', auth: 'none' } } }, async () => app.swagger());
}

/** Every area's routes behind the auth hook (the admin API only with ADMIN_TOKEN), and /mcp. */
async function registerRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  registerAuthHook(app, deps);
  registerUnreadBodyHook(app);
  decorateSynchronousJobObserver(app);
  const modules = [
    systemRoutes,
    workspaceRoutes,
    usageRoutes,
    billingRoutes,
    costRoutes,
    toolRoutes,
    runRoutes,
    jobRoutes,
    streamRoutes,
    mediaRoutes,
    voiceRoutes,
    eventRoutes,
    webhookRoutes,
    deliveryRoutes,
    consoleRoutes,
  ];
  if (deps.config.adminToken) modules.push(adminRoutes);
  for (const routes of modules) await app.register(async (instance) => routes(instance, deps));
  await app.register(async (instance) => mcpEndpoint(instance, deps, app));
}
