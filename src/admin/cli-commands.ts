/**
 * The operator tool's commands: each declares its options, builds the admin API's request from
 * them (checked before the database is opened) and runs it through the same services as the
 * admin API.
 */
import type { Deps } from '../deps.js';
import * as accounts from '../modules/accounts/service.js';
import { createKey, revokeKey } from '../modules/auth/keys.js';
import { SCOPES, TRANSPORTS } from '../modules/auth/scopes.js';
import { grantCredits } from '../modules/billing/service.js';
import { addDomain, removeDomain, verifyDomain } from '../modules/domains/service.js';
import { listWorkspaceNotifications } from '../modules/notifications/service.js';
import { setProviderKey } from '../modules/provider-keys/service.js';
import { OPERATION_IDS } from '../operations/ids.js';
import { budgets, checked, csv, int, limits, lowCredits, single, UsageError, type Command, type OptionName, type Values } from './cli-input.js';
import * as P from './present.js';
import * as S from './schemas.js';
import { READ_COMMANDS } from './cli-reads.js';
import { COST_COMMANDS } from './cli-costs.js';
import { issueSignInLink } from '../console/sessions.js';
import { AppError } from '../http/errors.js';

/** A result printed as it is rather than as JSON. */
export class Text {
  constructor(readonly text: string) {}
}

function command<I>(c: Command<I>): Command<unknown> {
  return c as unknown as Command<unknown>;
}

const WORKSPACE = { id: '--workspace' } as const;
const BUDGET = { budgets: '--budget' } as const;

export const COMMANDS: Record<string, Command<unknown>> = {
  migrate: command({
    options: [],
    parse: () => undefined,
    // createDeps has applied the migrations by the time this runs.
    run: async () => new Text('migrations applied'),
  }),

  quickstart: command({
    options: ['email', 'plan', 'credits', 'json'],
    parse: (v) => ({
      user: checked(S.CreateUserBody, { email: v.email ?? 'owner@example.com', name: 'Local owner' }, { email: '--email' }),
      workspace: checked(S.CreateWorkspaceBody, { name: 'Quickstart workspace', plan: v.plan ?? 'pro' }, { plan: '--plan' }),
      credits: checked(S.GrantCreditsBody, { amountMillicents: int(v.credits) ?? 1_000_000 }, { amountMillicents: '--credits' }),
      json: v.json === true,
    }),
    run: quickstart,
  }),

  'users create': command({
    options: ['email', 'name'],
    parse: (v) => checked(S.CreateUserBody, { email: v.email, name: v.name }, { email: '--email', name: '--name' }),
    run: async (deps, body) => ({ user: P.presentUser(await accounts.createUser(deps, body)) }),
  }),

  'users sign-in-link': command({
    options: ['email'],
    parse: (v) => checked(S.SignInLinkEmail, { email: v.email }, { email: '--email' }),
    run: async (deps, body) => {
      const user = await accounts.findUserByEmail(deps, body.email);
      if (!user) throw new AppError('NOT_FOUND', { message: 'No user with this email.' });
      const link = await issueSignInLink(deps, user.id);
      return { url: link.url, expiresAt: new Date(link.expiresAt).toISOString() };
    },
  }),

  'orgs create': command({
    options: ['name', 'owner'],
    parse: (v) => checked(S.CreateOrganizationBody, { name: v.name, ownerUserId: v.owner }, { name: '--name', ownerUserId: '--owner' }),
    run: async (deps, body) => ({ organization: P.presentOrganization(await accounts.createOrganization(deps, body)) }),
  }),

  'orgs set-member': command({
    options: ['org', 'user', 'role'],
    parse: (v) => ({
      params: checked(S.IdParams, { id: v.org }, { id: '--org' }),
      body: checked(S.AddMemberBody, { userId: v.user, role: v.role }, { userId: '--user', role: '--role' }),
    }),
    run: async (deps, { params, body }) => ({ member: await accounts.setMember(deps, params.id, body) }),
  }),

  'orgs remove-member': command({
    options: ['org', 'user'],
    parse: (v) => checked(S.MemberParams, { id: v.org, userId: v.user }, { id: '--org', userId: '--user' }),
    run: async (deps, params) => {
      await accounts.removeMember(deps, params.id, params.userId);
      return { removed: true };
    },
  }),

  'workspaces create': command({
    options: ['name', 'plan', 'owner', 'org', 'low-credits'],
    parse: (v) => {
      if ((v.owner === undefined) === (v.org === undefined)) throw new UsageError('give exactly one of --owner (personal workspace) or --org');
      return checked(
        S.CreateWorkspaceBody,
        { name: v.name, plan: v.plan, ownerUserId: v.owner, organizationId: v.org, lowCreditsMillicents: lowCredits(v['low-credits']) },
        { name: '--name', plan: '--plan', ownerUserId: '--owner', organizationId: '--org', lowCreditsMillicents: '--low-credits' },
      );
    },
    run: async (deps, body) => ({ workspace: P.presentWorkspace(await accounts.createWorkspace(deps, body)) }),
  }),

  'workspaces settings': command({
    options: ['workspace', 'plan', 'limit', 'budget', 'low-credits'],
    parse: (v) => ({
      params: checked(S.IdParams, { id: single(v.workspace, '--workspace') }, WORKSPACE),
      body: (() => {
        if (v.plan === undefined && !v.limit?.length && !v.budget?.length && v['low-credits'] === undefined) {
          throw new UsageError('give at least one of --plan, --limit, --budget or --low-credits');
        }
        return checked(
          S.WorkspaceSettingsBody,
          { plan: v.plan, limits: limits(v.limit), budgets: budgets(v.budget), lowCreditsMillicents: lowCredits(v['low-credits']) },
          { plan: '--plan', limits: '--limit', ...BUDGET, lowCreditsMillicents: '--low-credits' },
        );
      })(),
    }),
    run: async (deps, { params, body }) => P.presentSettings(await accounts.updateWorkspaceSettings(deps, params.id, body)),
  }),

  'credits grant': command({
    options: ['workspace', 'amount', 'expires', 'provenance', 'mode'],
    parse: (v) => ({
      params: checked(S.IdParams, { id: single(v.workspace, '--workspace') }, WORKSPACE),
      body: checked(
        S.GrantCreditsBody,
        { amountMillicents: int(v.amount), expiresAt: v.expires, provenance: v.provenance, mode: v.mode },
        { amountMillicents: '--amount', expiresAt: '--expires', provenance: '--provenance', mode: '--mode' },
      ),
    }),
    run: async (deps, { params, body }) => ({
      allocation: P.presentAllocation(
        await grantCredits(deps, params.id, {
          amountMillicents: body.amountMillicents,
          expiresAt: P.parseTimestamp(body.expiresAt) ?? null,
          ...(body.provenance ? { provenance: body.provenance } : {}),
          ...(body.mode ? { mode: body.mode } : {}),
        }),
      ),
    }),
  }),

  'domains add': command({
    options: ['workspace', 'hostname'],
    parse: (v) => ({
      params: checked(S.IdParams, { id: single(v.workspace, '--workspace') }, WORKSPACE),
      body: checked(S.AddDomainBody, { hostname: v.hostname }, { hostname: '--hostname' }),
    }),
    run: async (deps, { params, body }) => ({ domain: P.presentDomain(await addDomain(deps, params.id, body.hostname)) }),
  }),

  'domains verify': command({
    options: ['workspace', 'hostname', 'method'],
    parse: (v) => ({
      params: checked(S.HostnameParams, { id: single(v.workspace, '--workspace'), hostname: v.hostname }, { ...WORKSPACE, hostname: '--hostname' }),
      body: checked(S.VerifyDomainBody, { method: v.method }, { method: '--method' }),
    }),
    run: async (deps, { params, body }) => ({ domain: P.presentDomain(await verifyDomain(deps, params.id, params.hostname, body.method)) }),
  }),

  'domains remove': command({
    options: ['workspace', 'hostname'],
    parse: (v) => checked(S.HostnameParams, { id: single(v.workspace, '--workspace'), hostname: v.hostname }, { ...WORKSPACE, hostname: '--hostname' }),
    run: async (deps, params) => {
      await removeDomain(deps, params.id, params.hostname);
      return { removed: true };
    },
  }),

  'provider-keys set': command({
    options: ['workspace', 'provider', 'api-key'],
    parse: (v) => ({
      params: checked(S.IdParams, { id: single(v.workspace, '--workspace') }, WORKSPACE),
      body: checked(S.ProviderKeyBody, { provider: v.provider, apiKey: v['api-key'] }, { provider: '--provider', apiKey: '--api-key' }),
    }),
    run: async (deps, { params, body }) => ({ providerKey: P.presentProviderKey(await setProviderKey(deps, params.id, body)) }),
  }),

  'notifications list': command({
    options: ['workspace'],
    parse: (v) => checked(S.IdParams, { id: single(v.workspace, '--workspace') }, WORKSPACE),
    run: async (deps, params) => {
      // The newest 100 (each kind is capped per subject and day or period, so that is weeks).
      const page = await listWorkspaceNotifications(deps, params.id, { limit: 100 });
      return { items: page.items.map(P.presentNotification) };
    },
  }),

  'keys create': command({
    options: ['user', 'workspace', 'scopes', 'operations', 'transports', 'expires', 'ip-range', 'budget', 'mode'],
    parse: (v) =>
      checked(
        S.CreateKeyBody,
        {
          userId: v.user,
          workspaceIds: v.workspace,
          scopes: csv(v.scopes, SCOPES, SCOPES),
          operations: csv(v.operations, OPERATION_IDS, OPERATION_IDS),
          transports: csv(v.transports, TRANSPORTS, ['rest']),
          expiresAt: v.expires,
          ipRanges: v['ip-range'],
          budgets: budgets(v.budget),
          mode: v.mode,
        },
        {
          userId: '--user',
          workspaceIds: '--workspace',
          scopes: '--scopes',
          operations: '--operations',
          transports: '--transports',
          expiresAt: '--expires',
          ipRanges: '--ip-range',
          mode: '--mode',
          ...BUDGET,
        },
      ),
    run: async (deps, body) => {
      const { key, secret } = await createKey(deps, { ...body, expiresAt: P.parseTimestamp(body.expiresAt) ?? null });
      return { key: P.presentKey(key), secret };
    },
  }),

  'keys revoke': command({
    options: ['key'],
    parse: (v) => checked(S.IdParams, { id: v.key }, { id: '--key' }),
    run: async (deps, params) => ({ key: P.presentKey(await revokeKey(deps, params.id)) }),
  }),

  ...READ_COMMANDS,
  ...COST_COMMANDS,
};

interface QuickstartInput {
  user: S.CreateUserInput;
  workspace: S.CreateWorkspaceInput;
  credits: S.GrantCreditsInput;
  json: boolean;
}

/**
 * An owner (reused when the email exists), a personal workspace with credits and two all-scope
 * keys: a test key first (simulated work paid from the test balance), then a live key.
 */
async function quickstart(deps: Deps, input: QuickstartInput) {
  const user = (await accounts.findUserByEmail(deps, input.user.email)) ?? (await accounts.createUser(deps, input.user));
  const workspace = await accounts.createWorkspace(deps, { ...input.workspace, ownerUserId: user.id });
  const allocation = await grantCredits(deps, workspace.id, { amountMillicents: input.credits.amountMillicents, provenance: 'purchase' });
  const everything = { userId: user.id, workspaceIds: [workspace.id], scopes: [...SCOPES], operations: [...OPERATION_IDS], transports: [...TRANSPORTS] };
  const test = await createKey(deps, { ...everything, mode: 'test' });
  const { key, secret } = await createKey(deps, everything);
  if (input.json) {
    return {
      user: P.presentUser(user),
      workspace: P.presentWorkspace(workspace),
      testKey: P.presentKey(test.key),
      testSecret: test.secret,
      key: P.presentKey(key),
      secret,
      allocation: P.presentAllocation(allocation),
    };
  }
  const base = deps.config.publicBaseUrl;
  const headers = (s: string) => `-H "Authorization: Bearer ${s}" -H "X-Service-Workspace: ${workspace.id}"`;
  const chat = JSON.stringify({ operationId: 'chat.generate', input: { messages: [{ role: 'user', content: 'Hello!' }], maxTokens: 50 } });
  return new Text(
    [
      `Owner ${user.email}, personal workspace ${workspace.id} (plan ${workspace.plan}), ${allocation.amountMillicents} millicents of credits.`,
      '',
      `Test key (shown once, keep it): ${test.secret}`,
      `Live key (shown once, keep it): ${secret}`,
      'A test key runs every operation on the simulated provider, paid from a separate test balance: free, and never sent to a real provider. A live key does real work and spends real credits.',
      '',
      'Try it (with the service running: npm start):',
      `  curl -s ${base}/v1/runs ${headers(test.secret)} -H "Idempotency-Key: quickstart-1" -H "Content-Type: application/json" -d '${chat}'`,
      `  curl -s ${base}/v1/usage ${headers(secret)}`,
    ].join('\n'),
  );
}
