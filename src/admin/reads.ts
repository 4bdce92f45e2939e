/**
 * What the operator can look at (decisions.md section 6, issue 19): users, organizations with
 * members, workspaces with limits, budgets and balance, keys, jobs, the ledger, webhooks with
 * their deliveries and provider key names. Shared by the admin API and the command line tool.
 *
 * Lists are newest first and page with opaque cursors like the public API's (`keysetPage`): the
 * cursor is sealed with the list's name and its scope (the workspace, the user, or `admin` for
 * lists over the whole deployment), so a cursor of another list or another workspace is 400
 * INVALID_CURSOR. A workspace-, user- or organization-scoped read of an unknown id is 404.
 *
 * Nothing here returns a secret: keys are metadata (no secret, no hash), webhooks are the public
 * shape (no sealed secret), provider keys are names and dates (the sealed key is never read).
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { keysetPage, type PageRequest } from '../http/pagination.js';
import * as accounts from '../modules/accounts/store.js';
import type { Organization, User, Workspace } from '../modules/accounts/types.js';
import * as keyStore from '../modules/auth/store.js';
import type { ApiKey } from '../modules/auth/types.js';
import { settleExpirations } from '../modules/billing/expiry.js';
import * as billing from '../modules/billing/store.js';
import type { JobRow } from '../modules/jobs/store.js';
import { listProviderKeys } from '../modules/provider-keys/store.js';
import { budgetReportsOf } from '../modules/usage/service.js';
import { listDeliveries, type Delivery } from '../modules/webhooks/delivery-store.js';
import { findWebhook, listWebhooks, type WebhookRecord } from '../modules/webhooks/store.js';

/** Scope of the cursors of deployment-wide lists (users, organizations, workspaces). */
const DEPLOYMENT = 'admin';

function notFound(what: string): AppError {
  return new AppError('NOT_FOUND', { message: `No such ${what}.` });
}

async function requireWorkspace(deps: Deps, id: string): Promise<Workspace> {
  const ws = await accounts.findWorkspace(deps.db, id);
  if (!ws) throw notFound('workspace');
  return ws;
}

async function requireUser(deps: Deps, id: string): Promise<User> {
  const user = await accounts.findUser(deps.db, id);
  if (!user) throw notFound('user');
  return user;
}

export function listUsers(deps: Deps, page: PageRequest) {
  return keysetPage(deps, 'admin.users', DEPLOYMENT, page, (before, limit) => accounts.pageUsers(deps.db, before, limit));
}

export async function getUser(deps: Deps, id: string) {
  const user = await requireUser(deps, id);
  const [memberships, workspaceIds] = await Promise.all([accounts.listMemberships(deps.db, id), accounts.workspaceIdsOf(deps.db, { userId: id })]);
  return { user, memberships, workspaceIds };
}

export function listOrganizations(deps: Deps, page: PageRequest) {
  return keysetPage(deps, 'admin.organizations', DEPLOYMENT, page, (before, limit) => accounts.pageOrganizations(deps.db, before, limit));
}

export async function getOrganization(deps: Deps, id: string): Promise<{ organization: Organization; members: accounts.Member[]; workspaceIds: string[] }> {
  const organization = await accounts.findOrganization(deps.db, id);
  if (!organization) throw notFound('organization');
  const [members, workspaceIds] = await Promise.all([accounts.listMembers(deps.db, id), accounts.workspaceIdsOf(deps.db, { organizationId: id })]);
  return { organization, members, workspaceIds };
}

export function listWorkspaces(deps: Deps, page: PageRequest) {
  return keysetPage(deps, 'admin.workspaces', DEPLOYMENT, page, (before, limit) => accounts.pageWorkspaces(deps.db, before, limit));
}

/** A workspace with its limits, ceilings, what is spent and held against them, and its balance. */
export async function getWorkspace(deps: Deps, id: string) {
  const workspace = await requireWorkspace(deps, id);
  const now = deps.clock.now();
  await settleExpirations(deps, id, now);
  const [total, reserved, budgetUsage] = await Promise.all([
    billing.sumLiveRemaining(deps.db, id, now),
    billing.sumOpenHolds(deps.db, id),
    budgetReportsOf(deps, { workspace }),
  ]);
  return { workspace, budgetUsage, balance: { totalMillicents: total, reservedMillicents: reserved, spendableMillicents: total - reserved } };
}

export async function listWorkspaceKeys(deps: Deps, workspaceId: string, page: PageRequest) {
  await requireWorkspace(deps, workspaceId);
  return keysetPage(deps, 'admin.workspace.keys', workspaceId, page, (before, limit) => keyStore.pageKeys(deps.db, { workspaceId }, before, limit));
}

export async function listUserKeys(deps: Deps, userId: string, page: PageRequest) {
  await requireUser(deps, userId);
  return keysetPage(deps, 'admin.user.keys', userId, page, (before, limit) => keyStore.pageKeys(deps.db, { userId }, before, limit));
}

export async function getKey(deps: Deps, id: string): Promise<{ key: ApiKey; budgetUsage: Awaited<ReturnType<typeof budgetReportsOf>> }> {
  const key = await keyStore.findKey(deps.db, id);
  if (!key) throw notFound('key');
  return { key, budgetUsage: await budgetReportsOf(deps, { key }) };
}

/** Job columns of the operator's list: everything but the input, the result and the private worker state (the checkpoint is read for the provider). */
const LIST_COLUMNS = [
  'id', 'workspace_id', 'key_id', 'operation_id', 'tool_slug', 'status', 'execution_origin', 'funding', 'progress', 'cost_mc',
  'max_cost_mc', 'error_code', 'version', 'attempt', 'steps_total', 'steps_done', 'checkpoint_json', 'output_sha256',
  'created_at_ms', 'started_at_ms', 'completed_at_ms', 'updated_at_ms', 'run_after_ms', 'lease_expires_at_ms', 'recoveries',
] as const;
export type AdminJobRow = Pick<JobRow, (typeof LIST_COLUMNS)[number]> & Partial<Pick<JobRow, 'input_json' | 'output_json'>>;

export async function listJobs(deps: Deps, workspaceId: string, page: PageRequest) {
  await requireWorkspace(deps, workspaceId);
  return keysetPage(deps, 'admin.jobs', workspaceId, page, async (before, limit) => {
    let q = deps.db.selectFrom('jobs').select(LIST_COLUMNS).where('workspace_id', '=', workspaceId);
    if (before) q = q.where('id', '<', before);
    return (await q.orderBy('id', 'desc').limit(limit).execute()) as AdminJobRow[];
  });
}

/** One job with its input (the operator's view; the public result stays behind the output endpoint). */
export async function getJob(deps: Deps, id: string): Promise<AdminJobRow> {
  const row = await deps.db.selectFrom('jobs').select([...LIST_COLUMNS, 'input_json', 'output_json']).where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('job');
  return row as AdminJobRow;
}

export async function listLedger(deps: Deps, workspaceId: string, page: PageRequest) {
  await requireWorkspace(deps, workspaceId);
  await settleExpirations(deps, workspaceId);
  return keysetPage(deps, 'admin.transactions', workspaceId, page, (before, limit) => billing.pageLedger(deps.db, workspaceId, before, limit));
}

/** Deliveries shown with each webhook of the workspace list. */
export const RECENT_DELIVERIES = 5;

export async function listWorkspaceWebhooks(deps: Deps, workspaceId: string): Promise<{ webhook: WebhookRecord; recentDeliveries: Delivery[] }[]> {
  await requireWorkspace(deps, workspaceId);
  const webhooks = await listWebhooks(deps.db, workspaceId);
  return Promise.all(webhooks.map(async (webhook) => ({ webhook, recentDeliveries: await listDeliveries(deps.db, workspaceId, webhook.id, undefined, RECENT_DELIVERIES) })));
}

export async function listWebhookDeliveries(deps: Deps, workspaceId: string, webhookId: string, page: PageRequest) {
  await requireWorkspace(deps, workspaceId);
  if (!(await findWebhook(deps.db, workspaceId, webhookId))) throw notFound('webhook');
  return keysetPage(deps, 'admin.deliveries', `${workspaceId}:${webhookId}`, page, (before, limit) => listDeliveries(deps.db, workspaceId, webhookId, before, limit));
}

export async function listWorkspaceProviderKeys(deps: Deps, workspaceId: string) {
  await requireWorkspace(deps, workspaceId);
  return listProviderKeys(deps.db, workspaceId);
}
