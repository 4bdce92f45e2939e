/**
 * The console API under /console/api (issue 35): thin adapters over src/console/service.ts and
 * sessions.ts, in the public envelope. Authentication, origin and CSRF checks are the console's
 * own hook (http.ts); the public API's key hook never runs here (RouteMeta auth 'none').
 */
import type { Static, TSchema } from 'typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { envelopeSchema, ok } from '../http/envelope.js';
import { AppError } from '../http/errors.js';
import * as P from '../admin/present.js';
import { canonicalIds, EmptyBody } from '../admin/schemas.js';
import { clearSessionCookie, cookieSettings, registerConsoleHooks, setSessionCookie } from './http.js';
import { enforceLimit, SIGN_IN_LIMIT } from './rate-limit.js';
import * as C from './schemas.js';
import { createWorkspaceKey, listUserWorkspaces, listWorkspaceKeys, revokeWorkspaceKey, rollWorkspaceKey, updateWorkspaceKey, type ConsoleWorkspace } from './service.js';
import { csrfTokenOf, signIn, signOut, type ConsoleSession } from './sessions.js';
import { consoleCsp, consoleStaticRoutes } from './static.js';
import { consoleMediaRoutes, signedMediaOrigins } from './routes-media.js';
import { consoleWebhookRoutes } from './routes-webhooks.js';
import { registerJobRoutes } from './routes-jobs.js';
import { registerRunRoutes } from './routes-runs.js';
import { registerUsageRoutes } from './routes-usage.js';
import { SCOPES, TRANSPORTS } from '../modules/auth/scopes.js';
import { OPERATION_IDS } from '../operations/ids.js';

function session(request: FastifyRequest): ConsoleSession {
  if (!request.consoleSession) throw new AppError('UNAUTHENTICATED');
  return request.consoleSession;
}

const presentWorkspace = (w: ConsoleWorkspace) => ({
  id: w.workspace.id,
  name: w.workspace.name,
  plan: w.workspace.plan,
  organizationId: w.workspace.organizationId,
  organizationName: w.organizationName,
  role: w.role,
  canManageKeys: w.role !== 'member',
});

const KEY_OPTIONS = { scopes: [...SCOPES], transports: [...TRANSPORTS], operations: [...OPERATION_IDS] };

type Req<B, Params> = FastifyRequest<{ Body: B; Params: Params }>;

async function consoleApi(app: FastifyInstance, deps: Deps): Promise<void> {
  const cookie = cookieSettings(deps.config.publicBaseUrl);
  app.decorateRequest('consoleSession', undefined);
  registerConsoleHooks(app, deps, cookie);
  app.addHook('preHandler', (request, _reply, done) => {
    request.params = canonicalIds(request.params);
    done();
  });

  function route<B extends TSchema, Params extends TSchema, R extends TSchema>(
    method: 'GET' | 'POST',
    url: string,
    code: string,
    message: string,
    schemas: { body?: B; params?: Params; response: R },
    handler: (request: Req<Static<B>, Static<Params>>, reply: FastifyReply) => Promise<unknown>,
    options: { public?: boolean } = {},
  ): void {
    app.route({
      method,
      url,
      schema: { hide: true, ...(schemas.body ? { body: schemas.body } : {}), ...(schemas.params ? { params: schemas.params } : {}), response: { 200: envelopeSchema(schemas.response) } },
      config: { meta: { code, message, auth: 'none' }, console: { public: options.public === true } },
      handler: async (request, reply) => ok(request, await handler(request as Req<Static<B>, Static<Params>>, reply)),
    });
  }

  route('POST', '/console/api/sign-in', 'CONSOLE_SIGN_IN', 'Signed in.', { body: C.SignInBody, response: C.SessionSchema }, async (r, reply) => {
    enforceLimit(deps, SIGN_IN_LIMIT, r.ip);
    const started = await signIn(deps, r.body.token);
    setSessionCookie(reply, cookie, started.sessionToken);
    return { user: P.presentUser(started.user), csrfToken: started.csrfToken };
  }, { public: true });

  route('POST', '/console/api/sign-out', 'CONSOLE_SIGN_OUT', 'Signed out.', { body: EmptyBody, response: C.SignedOutSchema }, async (r, reply) => {
    await signOut(deps, session(r).id);
    clearSessionCookie(reply, cookie);
    return { signedOut: true };
  });

  route('GET', '/console/api/me', 'CONSOLE_ME', 'The signed-in user and their workspaces.', { response: C.MeSchema }, async (r) => {
    const s = session(r);
    return { user: P.presentUser(s.user), csrfToken: csrfTokenOf(s.token), workspaces: (await listUserWorkspaces(deps, s.user.id)).map(presentWorkspace), keyOptions: KEY_OPTIONS };
  });

  route('GET', '/console/api/workspaces/:workspaceId/keys', 'CONSOLE_KEYS_LIST', 'API keys of the workspace, newest first (metadata only).', { params: C.WorkspaceParams, response: C.KeyListSchema }, async (r) => ({
    items: (await listWorkspaceKeys(deps, session(r).user.id, r.params.workspaceId)).map(P.presentKey),
  }));

  route('POST', '/console/api/workspaces/:workspaceId/keys', 'CONSOLE_KEYS_CREATE', 'API key created; the secret is shown once.', { params: C.WorkspaceParams, body: C.CreateKeyBody, response: C.KeyWithSecretSchema }, async (r) => {
    const { key, secret } = await createWorkspaceKey(deps, session(r).user.id, r.params.workspaceId, { ...r.body, expiresAt: P.parseTimestamp(r.body.expiresAt) ?? null });
    return { key: P.presentKey(key), secret };
  });

  route('POST', '/console/api/workspaces/:workspaceId/keys/:keyId/revoke', 'CONSOLE_KEYS_REVOKE', 'API key revoked.', { params: C.KeyParams, body: EmptyBody, response: C.KeyOnlySchema }, async (r) => ({
    key: P.presentKey(await revokeWorkspaceKey(deps, session(r).user.id, r.params.workspaceId, r.params.keyId)),
  }));

  route('POST', '/console/api/workspaces/:workspaceId/keys/:keyId/update', 'CONSOLE_KEYS_UPDATE', 'API key changed.', { params: C.KeyParams, body: C.UpdateKeyBody, response: C.KeyOnlySchema }, async (r) => {
    const { expiresAt, ...rest } = r.body;
    const input = { ...rest, ...(expiresAt !== undefined ? { expiresAt: P.parseTimestamp(expiresAt) ?? null } : {}) };
    return { key: P.presentKey(await updateWorkspaceKey(deps, session(r).user.id, r.params.workspaceId, r.params.keyId, input)) };
  });

  route('POST', '/console/api/workspaces/:workspaceId/keys/:keyId/roll', 'CONSOLE_KEYS_ROLL', 'API key rolled; the new secret is shown once.', { params: C.KeyParams, body: C.RollKeyBody, response: C.KeyWithSecretSchema }, async (r) => {
    const { key, secret } = await rollWorkspaceKey(deps, session(r).user.id, r.params.workspaceId, r.params.keyId, r.body.overlapSeconds);
    return { key: P.presentKey(key), secret };
  });

  await consoleMediaRoutes(app, deps);
  await consoleWebhookRoutes(app, deps);
  registerRunRoutes(app, deps);
  registerJobRoutes(app, deps);
  registerUsageRoutes(app, deps);
}

/** The console: its API, and its built pages under /console. */
export async function consoleRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  await app.register(async (instance) => consoleApi(instance, deps));
  const csp = consoleCsp(await signedMediaOrigins(deps));
  await app.register(async (instance) => consoleStaticRoutes(instance, undefined, csp));
}
