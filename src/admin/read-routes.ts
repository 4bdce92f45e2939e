/**
 * The operator's reads and changes over HTTP (decisions.md section 6): registered by adminRoutes,
 * so the admin token, the credential-in-query refusal and the id spellings apply as to the rest.
 * Thin: validate, call reads.ts or the module service, present.
 */
import { Type, type Static, type TSchema } from 'typebox';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { envelopeSchema, ok } from '../http/envelope.js';
import { rollKey, updateKey } from '../modules/auth/keys.js';
import { adjustCredits } from '../modules/billing/adjustments.js';
import { CostReportSchema } from '../modules/costs/routes.js';
import { AdminCostQuery, TopSpendersQuery, TopSpendersSchema } from './cost-schemas.js';
import { getTopSpenders, getWorkspaceCosts } from '../modules/costs/service.js';
import { UsageHistoryQuerySchema, UsageHistorySchema } from '../modules/usage/history-routes.js';
import { getUsageHistory } from '../modules/usage/history-service.js';
import { findWorkspace } from '../modules/accounts/store.js';
import { AppError } from '../http/errors.js';
import * as R from './reads.js';
import * as RS from './read-schemas.js';
import * as RP from './read-present.js';
import * as S from './schemas.js';
import * as P from './present.js';

type Req<Params, Query, Body> = FastifyRequest<{ Params: Params; Querystring: Query; Body: Body }>;

const pageOf = (q: RS.AdminPage) => ({ limit: q.limit ?? 25, cursor: q.cursor });

export async function adminReadRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  function get<Params extends TSchema, Query extends TSchema, R extends TSchema>(
    url: string,
    code: string,
    message: string,
    schemas: { params?: Params; query: Query; response: R },
    handler: (r: Req<Static<Params>, Static<Query>, unknown>) => Promise<unknown>,
  ): void {
    app.get(
      url,
      {
        schema: { hide: true, ...(schemas.params ? { params: schemas.params } : {}), querystring: schemas.query, response: { 200: envelopeSchema(schemas.response) } },
        config: { meta: { code, message, auth: 'admin' } },
      },
      async (request) => ok(request, await handler(request as Req<Static<Params>, Static<Query>, unknown>)),
    );
  }
  function post<Params extends TSchema, B extends TSchema, R extends TSchema>(
    url: string,
    code: string,
    message: string,
    schemas: { params: Params; body: B; response: R },
    handler: (r: Req<Static<Params>, unknown, Static<B>>) => Promise<unknown>,
  ): void {
    app.post(
      url,
      { schema: { hide: true, params: schemas.params, body: schemas.body, response: { 200: envelopeSchema(schemas.response) } }, config: { meta: { code, message, auth: 'admin' } } },
      async (request) => ok(request, await handler(request as Req<Static<Params>, unknown, Static<B>>)),
    );
  }
  const Page = RS.AdminPageQuery;
  const list = async <T, U>(p: Promise<{ items: T[]; nextCursor: string | null }>, present: (t: T) => U) => {
    const { items, nextCursor } = await p;
    return { items: items.map(present), nextCursor };
  };

  // ---- users and organizations --------------------------------------------------------------
  get('/admin/v1/users', 'ADMIN_USERS_LIST', 'Users listed, newest first.', { query: Page, response: RS.page(S.UserSchema) }, (r) => list(R.listUsers(deps, pageOf(r.query)), P.presentUser));
  get('/admin/v1/users/:id', 'ADMIN_USERS_GET', 'User.', { params: S.IdParams, query: RS.EmptyQuery, response: RS.UserDetailSchema }, async (r) => {
    const d = await R.getUser(deps, r.params.id);
    return { user: P.presentUser(d.user), memberships: d.memberships, workspaceIds: d.workspaceIds };
  });
  get('/admin/v1/users/:id/keys', 'ADMIN_USER_KEYS_LIST', "The user's API keys, newest first.", { params: S.IdParams, query: Page, response: RS.page(S.KeySchema) }, (r) =>
    list(R.listUserKeys(deps, r.params.id, pageOf(r.query)), P.presentKey),
  );
  get('/admin/v1/organizations', 'ADMIN_ORGANIZATIONS_LIST', 'Organizations listed, newest first.', { query: Page, response: RS.page(S.OrganizationSchema) }, (r) =>
    list(R.listOrganizations(deps, pageOf(r.query)), P.presentOrganization),
  );
  get('/admin/v1/organizations/:id', 'ADMIN_ORGANIZATIONS_GET', 'Organization with its members.', { params: S.IdParams, query: RS.EmptyQuery, response: RS.OrganizationDetailSchema }, async (r) => {
    const d = await R.getOrganization(deps, r.params.id);
    return { organization: P.presentOrganization(d.organization), members: d.members.map(RP.presentMember), workspaceIds: d.workspaceIds };
  });

  // ---- workspaces and what is in them ---------------------------------------------------------
  get('/admin/v1/workspaces', 'ADMIN_WORKSPACES_LIST', 'Workspaces listed, newest first.', { query: Page, response: RS.page(S.AdminWorkspaceSchema) }, (r) =>
    list(R.listWorkspaces(deps, pageOf(r.query)), P.presentWorkspace),
  );
  get('/admin/v1/workspaces/:id', 'ADMIN_WORKSPACES_GET', 'Workspace with limits, budgets and balance.', { params: S.IdParams, query: RS.EmptyQuery, response: RS.WorkspaceDetailSchema }, async (r) =>
    RP.presentWorkspaceDetail(await R.getWorkspace(deps, r.params.id)),
  );
  get('/admin/v1/workspaces/:id/keys', 'ADMIN_WORKSPACE_KEYS_LIST', 'API keys that include the workspace, newest first.', { params: S.IdParams, query: Page, response: RS.page(S.KeySchema) }, (r) =>
    list(R.listWorkspaceKeys(deps, r.params.id, pageOf(r.query)), P.presentKey),
  );
  get('/admin/v1/workspaces/:id/jobs', 'ADMIN_JOBS_LIST', 'Jobs of the workspace, newest first.', { params: S.IdParams, query: Page, response: RS.page(RS.AdminJobSchema) }, (r) =>
    list(R.listJobs(deps, r.params.id, pageOf(r.query)), RP.presentAdminJob),
  );
  get('/admin/v1/workspaces/:id/transactions', 'ADMIN_TRANSACTIONS_LIST', 'Ledger of the workspace, newest first.', { params: S.IdParams, query: Page, response: RS.page(RS.AdminTransactionSchema) }, (r) =>
    list(R.listLedger(deps, r.params.id, pageOf(r.query)), RP.presentTransaction),
  );
  get('/admin/v1/workspaces/:id/webhooks', 'ADMIN_WEBHOOKS_LIST', 'Webhooks of the workspace with their recent deliveries.', { params: S.IdParams, query: RS.EmptyQuery, response: Type.Object({ items: Type.Array(RS.AdminWebhookSchema) }) }, async (r) => ({
    items: (await R.listWorkspaceWebhooks(deps, r.params.id)).map(RP.presentAdminWebhook),
  }));
  get('/admin/v1/workspaces/:id/webhooks/:webhookId/deliveries', 'ADMIN_DELIVERIES_LIST', "The webhook's deliveries, newest first.", { params: RS.WebhookParams, query: Page, response: RS.page(RS.AdminDeliverySchema) }, (r) =>
    list(R.listWebhookDeliveries(deps, r.params.id, r.params.webhookId, pageOf(r.query)), RP.presentAdminDelivery),
  );
  get('/admin/v1/workspaces/:id/provider-keys', 'ADMIN_PROVIDER_KEYS_LIST', 'Provider keys of the workspace (names and dates only).', { params: S.IdParams, query: RS.EmptyQuery, response: Type.Object({ items: Type.Array(RS.ProviderKeyNameSchema) }) }, async (r) => ({
    items: (await R.listWorkspaceProviderKeys(deps, r.params.id)).map(RP.presentProviderKeyName),
  }));
  get('/admin/v1/jobs/:id', 'ADMIN_JOBS_GET', 'Job with every field.', { params: S.IdParams, query: RS.EmptyQuery, response: Type.Object({ job: RS.AdminJobDetailSchema }) }, async (r) => ({
    job: RP.presentAdminJobDetail(await R.getJob(deps, r.params.id)),
  }));
  get('/admin/v1/keys/:id', 'ADMIN_KEYS_GET', 'API key (metadata only).', { params: S.IdParams, query: RS.EmptyQuery, response: RS.KeyDetailSchema }, async (r) => {
    const d = await R.getKey(deps, r.params.id);
    return { key: P.presentKey(d.key), budgetUsage: d.budgetUsage.map(RP.presentBudgetUsage) };
  });

  // ---- cost and usage analytics (issue 36): the public reads for any workspace, and across them --
  get('/admin/v1/workspaces/:id/costs', 'ADMIN_COSTS_GET', 'Costs of the workspace per UTC bucket.', { params: S.IdParams, query: AdminCostQuery, response: CostReportSchema }, (r) =>
    getWorkspaceCosts(deps, r.params.id, r.query),
  );
  get('/admin/v1/workspaces/:id/usage/history', 'ADMIN_USAGE_HISTORY_GET', 'Usage points and 429s of the workspace per UTC bucket.', { params: S.IdParams, query: UsageHistoryQuerySchema, response: UsageHistorySchema }, async (r) => {
    if (!(await findWorkspace(deps.db, r.params.id))) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    return getUsageHistory(deps, r.params.id, r.query);
  });
  get('/admin/v1/costs/top-spenders', 'ADMIN_TOP_SPENDERS', 'Workspaces by spending over the range, the largest first.', { query: TopSpendersQuery, response: TopSpendersSchema }, (r) => getTopSpenders(deps, r.query));

  // ---- changes ----------------------------------------------------------------------------------
  post('/admin/v1/keys/:id/update', 'ADMIN_KEYS_UPDATE', 'API key changed.', { params: S.IdParams, body: RS.UpdateKeyBody, response: Type.Object({ key: S.KeySchema }) }, async (r) => {
    const { expiresAt, ...rest } = r.body;
    const key = await updateKey(deps, r.params.id, { ...rest, ...(expiresAt !== undefined ? { expiresAt: P.parseTimestamp(expiresAt) ?? null } : {}) });
    return { key: P.presentKey(key) };
  });
  post('/admin/v1/keys/:id/roll', 'ADMIN_KEYS_ROLL', 'API key rolled; the new secret is shown once.', { params: S.IdParams, body: RS.RollKeyBody, response: Type.Object({ key: S.KeySchema, secret: Type.String() }) }, async (r) => {
    const { key, secret } = await rollKey(deps, r.params.id, r.body.overlapSeconds);
    return { key: P.presentKey(key), secret };
  });
  post('/admin/v1/workspaces/:id/credits/adjust', 'ADMIN_CREDITS_ADJUST', 'Credits adjusted.', { params: S.IdParams, body: RS.AdjustCreditsBody, response: RS.AdjustmentSchema }, async (r) => {
    const { expiresAt, ...rest } = r.body;
    return RP.presentAdjustment(await adjustCredits(deps, r.params.id, { ...rest, ...(expiresAt !== undefined ? { expiresAt: P.parseTimestamp(expiresAt) ?? null } : {}) }));
  });
}
