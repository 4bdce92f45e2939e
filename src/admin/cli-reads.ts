/**
 * The operator tool's reads and changes (decisions.md section 6): the same verbs as the admin
 * API's GET routes, key update and roll and credit adjustments, over the same services, printing
 * the same JSON. Lists take --limit and --cursor and print {items, nextCursor}; a cursor printed
 * here works with the admin API and the other way round.
 */
import type { Deps } from '../deps.js';
import { rollKey, updateKey } from '../modules/auth/keys.js';
import { SCOPES, TRANSPORTS } from '../modules/auth/scopes.js';
import { adjustCredits } from '../modules/billing/adjustments.js';
import { OPERATION_IDS } from '../operations/ids.js';
import { budgets, checked, csv, int, single, UsageError, type OptionName, type Values } from './cli-input.js';
import type { Command } from './cli-input.js';
import * as R from './reads.js';
import * as RS from './read-schemas.js';
import * as RP from './read-present.js';
import * as P from './present.js';
import * as S from './schemas.js';

function command<I>(c: Command<I>): Command<unknown> {
  return c as unknown as Command<unknown>;
}

const PAGE: readonly OptionName[] = ['limit', 'cursor'];
const pageOf = (v: Values) => {
  const q = checked(RS.AdminPageQuery, { limit: int(single(v.limit, '--limit')), cursor: v.cursor }, { limit: '--limit', cursor: '--cursor' });
  return { limit: q.limit ?? 25, cursor: q.cursor };
};
const idOf = (value: string | undefined, flag: string) => checked(S.IdParams, { id: value }, { id: flag }).id;
const workspaceOf = (v: Values) => idOf(single(v.workspace, '--workspace'), '--workspace');

async function list<T, U>(p: Promise<{ items: T[]; nextCursor: string | null }>, present: (t: T) => U) {
  const { items, nextCursor } = await p;
  return { items: items.map(present), nextCursor };
}

/** A list command over one scope id (or none). */
function lister<T, U>(options: readonly OptionName[], scope: (v: Values) => string, fetch: (deps: Deps, id: string, page: { limit: number; cursor: string | undefined }) => Promise<{ items: T[]; nextCursor: string | null }>, present: (t: T) => U) {
  return command({
    options: [...options, ...PAGE],
    parse: (v) => ({ id: scope(v), page: pageOf(v) }),
    run: (deps, input: { id: string; page: { limit: number; cursor: string | undefined } }) => list(fetch(deps, input.id, input.page), present),
  });
}

export const READ_COMMANDS: Record<string, Command<unknown>> = {
  'users list': lister([], () => '', (deps, _id, page) => R.listUsers(deps, page), P.presentUser),
  'users get': command({
    options: ['user'],
    parse: (v) => idOf(v.user, '--user'),
    run: async (deps, id: string) => {
      const d = await R.getUser(deps, id);
      return { user: P.presentUser(d.user), memberships: d.memberships, workspaceIds: d.workspaceIds };
    },
  }),
  'orgs list': lister([], () => '', (deps, _id, page) => R.listOrganizations(deps, page), P.presentOrganization),
  'orgs get': command({
    options: ['org'],
    parse: (v) => idOf(v.org, '--org'),
    run: async (deps, id: string) => {
      const d = await R.getOrganization(deps, id);
      return { organization: P.presentOrganization(d.organization), members: d.members.map(RP.presentMember), workspaceIds: d.workspaceIds };
    },
  }),
  'workspaces list': lister([], () => '', (deps, _id, page) => R.listWorkspaces(deps, page), P.presentWorkspace),
  'workspaces get': command({
    options: ['workspace'],
    parse: workspaceOf,
    run: async (deps, id: string) => RP.presentWorkspaceDetail(await R.getWorkspace(deps, id)),
  }),
  'keys list': command({
    options: ['workspace', 'user', ...PAGE],
    parse: (v) => {
      if ((v.workspace === undefined) === (v.user === undefined)) throw new UsageError('give exactly one of --workspace or --user');
      return { owner: v.user !== undefined ? { userId: idOf(v.user, '--user') } : { workspaceId: workspaceOf(v) }, page: pageOf(v) };
    },
    run: (deps, input: { owner: { userId: string } | { workspaceId: string }; page: { limit: number; cursor: string | undefined } }) =>
      list('userId' in input.owner ? R.listUserKeys(deps, input.owner.userId, input.page) : R.listWorkspaceKeys(deps, input.owner.workspaceId, input.page), P.presentKey),
  }),
  'keys get': command({
    options: ['key'],
    parse: (v) => idOf(v.key, '--key'),
    run: async (deps, id: string) => {
      const d = await R.getKey(deps, id);
      return { key: P.presentKey(d.key), budgetUsage: d.budgetUsage.map(RP.presentBudgetUsage) };
    },
  }),
  'keys update': command({
    options: ['key', 'scopes', 'operations', 'transports', 'expires', 'ip-range', 'budget'],
    parse: (v) => {
      const ipRanges = v['ip-range'];
      const changes = [v.scopes, v.operations, v.transports, v.expires, ipRanges, v.budget];
      if (changes.every((c) => c === undefined)) throw new UsageError('give at least one change: --scopes, --operations, --transports, --expires, --ip-range or --budget');
      const body = checked(
        RS.UpdateKeyBody,
        {
          scopes: v.scopes === undefined ? undefined : csv(v.scopes, SCOPES, SCOPES),
          operations: v.operations === undefined ? undefined : v.operations === 'none' ? [] : csv(v.operations, OPERATION_IDS, OPERATION_IDS),
          transports: v.transports === undefined ? undefined : csv(v.transports, TRANSPORTS, TRANSPORTS),
          expiresAt: v.expires === 'none' ? null : v.expires,
          ipRanges: ipRanges === undefined ? undefined : ipRanges.length === 1 && ipRanges[0] === 'none' ? [] : ipRanges,
          budgets: budgets(v.budget),
        },
        { scopes: '--scopes', operations: '--operations', transports: '--transports', expiresAt: '--expires', ipRanges: '--ip-range', budgets: '--budget' },
      );
      return { id: idOf(v.key, '--key'), body };
    },
    run: async (deps, { id, body }: { id: string; body: RS.UpdateKeyRequest }) => {
      const { expiresAt, ...rest } = body;
      const key = await updateKey(deps, id, { ...rest, ...(expiresAt !== undefined ? { expiresAt: P.parseTimestamp(expiresAt) ?? null } : {}) });
      return { key: P.presentKey(key) };
    },
  }),
  'keys roll': command({
    options: ['key', 'overlap'],
    parse: (v) => ({ id: idOf(v.key, '--key'), body: checked(RS.RollKeyBody, { overlapSeconds: int(v.overlap) }, { overlapSeconds: '--overlap' }) }),
    run: async (deps, { id, body }: { id: string; body: { overlapSeconds: number } }) => {
      const { key, secret } = await rollKey(deps, id, body.overlapSeconds);
      return { key: P.presentKey(key), secret };
    },
  }),
  'jobs list': lister(['workspace'], workspaceOf, R.listJobs, RP.presentAdminJob),
  'jobs get': command({
    options: ['job'],
    parse: (v) => idOf(v.job, '--job'),
    run: async (deps, id: string) => ({ job: RP.presentAdminJobDetail(await R.getJob(deps, id)) }),
  }),
  'transactions list': lister(['workspace'], workspaceOf, R.listLedger, RP.presentTransaction),
  'webhooks list': command({
    options: ['workspace'],
    parse: workspaceOf,
    run: async (deps, id: string) => ({ items: (await R.listWorkspaceWebhooks(deps, id)).map(RP.presentAdminWebhook) }),
  }),
  'webhooks deliveries': command({
    options: ['workspace', 'webhook', ...PAGE],
    parse: (v) => ({ workspaceId: workspaceOf(v), webhookId: idOf(v.webhook, '--webhook'), page: pageOf(v) }),
    run: (deps, i: { workspaceId: string; webhookId: string; page: { limit: number; cursor: string | undefined } }) =>
      list(R.listWebhookDeliveries(deps, i.workspaceId, i.webhookId, i.page), RP.presentAdminDelivery),
  }),
  'provider-keys list': command({
    options: ['workspace'],
    parse: workspaceOf,
    run: async (deps, id: string) => ({ items: (await R.listWorkspaceProviderKeys(deps, id)).map(RP.presentProviderKeyName) }),
  }),
  'credits adjust': command({
    options: ['workspace', 'amount', 'reason', 'provenance', 'expires'],
    parse: (v) => ({
      id: workspaceOf(v),
      body: checked(
        RS.AdjustCreditsBody,
        { amountMillicents: int(v.amount), reason: v.reason, provenance: v.provenance, expiresAt: v.expires },
        { amountMillicents: '--amount', reason: '--reason', provenance: '--provenance', expiresAt: '--expires' },
      ),
    }),
    run: async (deps, { id, body }: { id: string; body: RS.AdjustCreditsRequest }) => {
      const { expiresAt, ...rest } = body;
      return RP.presentAdjustment(await adjustCredits(deps, id, { ...rest, ...(expiresAt !== undefined ? { expiresAt: P.parseTimestamp(expiresAt) ?? null } : {}) }));
    },
  }),
};
