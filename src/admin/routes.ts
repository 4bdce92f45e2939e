/**
 * The operator's admin API (decisions.md section 4), mounted only when ADMIN_TOKEN is set.
 * Thin: each route validates, calls the same service the command line tool calls, and presents.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { queryPairs } from '../http/auth-hook.js';
import { envelopeSchema, ok } from '../http/envelope.js';
import { AppError } from '../http/errors.js';
import * as accounts from '../modules/accounts/service.js';
import { createKey, revokeKey } from '../modules/auth/keys.js';
import { QUERY_KEY_PARAMS } from '../modules/auth/service.js';
import { grantCredits } from '../modules/billing/service.js';
import { addDomain, removeDomain, verifyDomain } from '../modules/domains/service.js';
import { listWorkspaceNotifications } from '../modules/notifications/service.js';
import { setProviderKey } from '../modules/provider-keys/service.js';
import * as S from './schemas.js';
import * as P from './present.js';
import { adminReadRoutes } from './read-routes.js';
import { issueSignInLink } from '../console/sessions.js';
import { enforceLimit, LINK_ISSUE_LIMIT } from '../console/rate-limit.js';

type Handler<B, Params> = (request: FastifyRequest<{ Body: B; Params: Params }>) => Promise<unknown>;

/** Query parameter names that carry a credential (refused like an API key in the query string). */
const CREDENTIAL_PARAMS = new Set(QUERY_KEY_PARAMS.map((name) => name.toLowerCase()));

export async function adminRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  // The admin token belongs in the Authorization header only: in a URL it reaches logs, proxies
  // and browser history. A query string that carries it (or any credential parameter) is 401,
  // even beside a valid header, like an API key there (decisions.md section 1). This hook of the
  // admin routes runs before the per-route token check, so nothing else is looked at first.
  const token = deps.config.adminToken;
  app.addHook('onRequest', (request, _reply, done) => {
    const pairs = request.url.includes('?') ? queryPairs(request.url) : [];
    if (pairs.some(([name, value]) => CREDENTIAL_PARAMS.has(name.toLowerCase()) || (token !== undefined && (name.includes(token) || value.includes(token))))) {
      return done(new AppError('UNAUTHENTICATED', { message: 'The admin token goes in the Authorization header, never in the query string.' }));
    }
    done();
  });
  // Ids in any spelling the schemas accept (upper case, urn:uuid:) name the same row.
  app.addHook('preHandler', (request, _reply, done) => {
    request.params = S.canonicalIds(request.params);
    if (request.body) request.body = S.canonicalIds(request.body);
    done();
  });

  function post<B extends TSchema, R extends TSchema, Params extends TSchema>(
    url: string,
    code: string,
    message: string,
    schemas: { body?: B; params?: Params; response: R },
    handler: Handler<Static<B>, Static<Params>>,
  ): void {
    app.post(
      url,
      {
        schema: { hide: true, ...(schemas.body ? { body: schemas.body } : {}), ...(schemas.params ? { params: schemas.params } : {}), response: { 200: envelopeSchema(schemas.response) } },
        config: { meta: { code, message, auth: 'admin' } },
      },
      async (request) => ok(request, await handler(request as FastifyRequest<{ Body: Static<B>; Params: Static<Params> }>)),
    );
  }
  post('/admin/v1/users', 'ADMIN_USERS_CREATE', 'User created.', { body: S.CreateUserBody, response: Type.Object({ user: S.UserSchema }) }, async (r) => ({
    user: P.presentUser(await accounts.createUser(deps, r.body)),
  }));

  post('/admin/v1/organizations', 'ADMIN_ORGANIZATIONS_CREATE', 'Organization created.', { body: S.CreateOrganizationBody, response: Type.Object({ organization: S.OrganizationSchema }) }, async (r) => ({
    organization: P.presentOrganization(await accounts.createOrganization(deps, r.body)),
  }));

  post('/admin/v1/organizations/:id/members', 'ADMIN_MEMBERS_SET', 'Member set.', { params: S.IdParams, body: S.AddMemberBody, response: Type.Object({ member: S.MemberSchema }) }, async (r) => ({
    member: await accounts.setMember(deps, r.params.id, r.body),
  }));

  post('/admin/v1/organizations/:id/members/:userId/remove', 'ADMIN_MEMBERS_REMOVE', 'Member removed.', { params: S.MemberParams, body: S.EmptyBody, response: Type.Object({ removed: Type.Boolean() }) }, async (r) => {
    await accounts.removeMember(deps, r.params.id, r.params.userId);
    return { removed: true };
  });

  post('/admin/v1/workspaces', 'ADMIN_WORKSPACES_CREATE', 'Workspace created.', { body: S.CreateWorkspaceBody, response: Type.Object({ workspace: S.AdminWorkspaceSchema }) }, async (r) => ({
    workspace: P.presentWorkspace(await accounts.createWorkspace(deps, r.body)),
  }));

  post('/admin/v1/workspaces/:id/settings', 'ADMIN_WORKSPACES_SETTINGS', 'Workspace settings updated.', { params: S.IdParams, body: S.WorkspaceSettingsBody, response: S.SettingsSchema }, async (r) =>
    P.presentSettings(await accounts.updateWorkspaceSettings(deps, r.params.id, r.body)),
  );

  post('/admin/v1/workspaces/:id/credits', 'ADMIN_CREDITS_GRANT', 'Credits granted.', { params: S.IdParams, body: S.GrantCreditsBody, response: Type.Object({ allocation: S.AllocationSchema }) }, async (r) => ({
    allocation: P.presentAllocation(
      await grantCredits(deps, r.params.id, {
        amountMillicents: r.body.amountMillicents,
        expiresAt: P.parseTimestamp(r.body.expiresAt) ?? null,
        ...(r.body.provenance ? { provenance: r.body.provenance } : {}),
        ...(r.body.mode ? { mode: r.body.mode } : {}),
      }),
    ),
  }));

  post('/admin/v1/workspaces/:id/domains', 'ADMIN_DOMAINS_ADD', 'Domain added.', { params: S.IdParams, body: S.AddDomainBody, response: Type.Object({ domain: S.DomainSchema }) }, async (r) => ({
    domain: P.presentDomain(await addDomain(deps, r.params.id, r.body.hostname)),
  }));

  post('/admin/v1/workspaces/:id/domains/:hostname/verify', 'ADMIN_DOMAINS_VERIFY', 'Domain verified.', { params: S.HostnameParams, body: S.VerifyDomainBody, response: Type.Object({ domain: S.DomainSchema }) }, async (r) => ({
    domain: P.presentDomain(await verifyDomain(deps, r.params.id, r.params.hostname, r.body.method)),
  }));

  post('/admin/v1/workspaces/:id/domains/:hostname/remove', 'ADMIN_DOMAINS_REMOVE', 'Domain removed.', { params: S.HostnameParams, body: S.EmptyBody, response: Type.Object({ removed: Type.Boolean() }) }, async (r) => {
    await removeDomain(deps, r.params.id, r.params.hostname);
    return { removed: true };
  });

  post('/admin/v1/workspaces/:id/provider-keys', 'ADMIN_PROVIDER_KEYS_SET', 'Provider key stored.', { params: S.IdParams, body: S.ProviderKeyBody, response: Type.Object({ providerKey: S.ProviderKeySchema }) }, async (r) => ({
    providerKey: P.presentProviderKey(await setProviderKey(deps, r.params.id, r.body)),
  }));

  app.get<{ Params: Static<typeof S.IdParams>; Querystring: Static<typeof S.NotificationsQuery> }>(
    '/admin/v1/workspaces/:id/notifications',
    {
      schema: {
        hide: true,
        params: S.IdParams,
        querystring: S.NotificationsQuery,
        response: { 200: envelopeSchema(Type.Object({ items: Type.Array(S.NotificationSchema), nextCursor: Type.Union([Type.String(), Type.Null()]) })) },
      },
      config: { meta: { code: 'ADMIN_NOTIFICATIONS_LIST', message: 'Notifications listed, newest first.', auth: 'admin' } },
    },
    async (request) => {
      const page = await listWorkspaceNotifications(deps, request.params.id, { limit: request.query.limit ?? 50, cursor: request.query.cursor });
      return ok(request, { items: page.items.map(P.presentNotification), nextCursor: page.nextCursor });
    },
  );

  post('/admin/v1/keys', 'ADMIN_KEYS_CREATE', 'API key created; the secret is shown once.', { body: S.CreateKeyBody, response: Type.Object({ key: S.KeySchema, secret: Type.String() }) }, async (r) => {
    const { key, secret } = await createKey(deps, { ...r.body, expiresAt: P.parseTimestamp(r.body.expiresAt) ?? null });
    return { key: P.presentKey(key), secret };
  });

  post('/admin/v1/keys/:id/revoke', 'ADMIN_KEYS_REVOKE', 'API key revoked.', { params: S.IdParams, body: S.EmptyBody, response: Type.Object({ key: S.KeySchema }) }, async (r) => ({
    key: P.presentKey(await revokeKey(deps, r.params.id)),
  }));

  // Owner sign-in for the console (decisions.md section 6): single use, 15 minutes, rate limited per user.
  post('/admin/v1/users/:id/sign-in-links', 'ADMIN_SIGN_IN_LINKS_CREATE', 'Sign-in link issued; it works once, for 15 minutes.', { params: S.IdParams, body: S.EmptyBody, response: S.SignInLinkSchema }, async (r) => {
    enforceLimit(deps, LINK_ISSUE_LIMIT, r.params.id);
    const link = await issueSignInLink(deps, r.params.id);
    return { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() };
  });

  // Reads, key update and roll, credit adjustments (decisions.md section 6).
  await adminReadRoutes(app, deps);
}
