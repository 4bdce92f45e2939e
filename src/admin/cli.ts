/**
 * The operator's command line tool: the admin API's verbs over the same services, plus
 * `quickstart`. Input is checked with the admin API's own schemas; output is JSON.
 */
import { parseArgs } from 'node:util';
import type { TSchema } from 'typebox';
import { resolveSecretKey, type Config } from '../config.js';
import { createDeps, type Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { compileStrict } from '../http/validation.js';
import * as accounts from '../modules/accounts/service.js';
import { findUserByEmail } from '../modules/accounts/store.js';
import { createKey, revokeKey } from '../modules/auth/keys.js';
import { SCOPES } from '../modules/auth/scopes.js';
import { grantCredits } from '../modules/billing/service.js';
import { addDomain, removeDomain, verifyDomain } from '../modules/domains/service.js';
import { setProviderKey } from '../modules/provider-keys/service.js';
import { OPERATION_IDS } from '../operations/ids.js';
import * as P from './present.js';
import * as S from './schemas.js';

export const CLI_USAGE = `Usage: was <verb> [options]   (npm run cli -- <verb> [options])

  serve | worker                       run the service (ROLE decides api, worker or all)
  migrate                              apply database migrations and exit
  quickstart [--email E] [--plan P] [--credits MILLICENTS]
                                       local owner, personal workspace, all-scope key, credits
  users create --email E --name N
  orgs create --name N --owner USER_ID
  orgs set-member --org ORG_ID --user USER_ID --role owner|admin|member
  orgs remove-member --org ORG_ID --user USER_ID
  workspaces create --name N --plan free|starter|pro (--owner USER_ID | --org ORG_ID)
  workspaces settings --workspace ID [--plan P] [--limit NAME=N|NAME=default]... [--budget daily|weekly|monthly=MILLICENTS|none]...
  credits grant --workspace ID --amount MILLICENTS [--expires ISO] [--provenance P]
  domains add|remove --workspace ID --hostname H
  domains verify --workspace ID --hostname H --method dns|http|operator
  provider-keys set --workspace ID --provider NAME --api-key KEY
  keys create --user USER_ID --workspace ID... [--scopes all|a,b] [--operations all|a,b] [--transports rest,mcp]
              [--expires ISO] [--ip-range CIDR]... [--budget daily|weekly|monthly=MILLICENTS]...
  keys revoke --key KEY_ID
`;

const OPTIONS = {
  email: { type: 'string' },
  name: { type: 'string' },
  plan: { type: 'string' },
  credits: { type: 'string' },
  owner: { type: 'string' },
  org: { type: 'string' },
  user: { type: 'string' },
  role: { type: 'string' },
  workspace: { type: 'string', multiple: true },
  limit: { type: 'string', multiple: true },
  budget: { type: 'string', multiple: true },
  amount: { type: 'string' },
  expires: { type: 'string' },
  provenance: { type: 'string' },
  hostname: { type: 'string' },
  method: { type: 'string' },
  provider: { type: 'string' },
  'api-key': { type: 'string' },
  scopes: { type: 'string' },
  operations: { type: 'string' },
  transports: { type: 'string' },
  'ip-range': { type: 'string', multiple: true },
  key: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

function checked<T>(schema: TSchema, value: unknown): T {
  const validate = compileStrict(schema);
  if (!validate(value)) {
    const problems = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}`).join('; ');
    throw new AppError('INVALID_REQUEST', { message: `Invalid options: ${problems}` });
  }
  return value as T;
}

function one(values: Values, name: 'workspace'): string | undefined {
  return values[name]?.[0];
}

function pairs(list: string[] | undefined, what: string): [string, string][] {
  return (list ?? []).map((item) => {
    const eq = item.indexOf('=');
    if (eq <= 0) throw new AppError('INVALID_REQUEST', { message: `--${what} takes NAME=VALUE (got "${item}")` });
    return [item.slice(0, eq), item.slice(eq + 1)];
  });
}

function budgets(list: string[] | undefined): Record<string, number | null> | undefined {
  if (!list?.length) return undefined;
  const out: Record<string, number | null> = {};
  for (const [period, value] of pairs(list, 'budget')) {
    out[`${period}Millicents`] = value === 'none' ? null : Number(value);
  }
  return out;
}

function csv(value: string | undefined, all: readonly string[], fallback: readonly string[]): string[] {
  if (value === undefined) return [...fallback];
  if (value === 'all') return [...all];
  return value.split(',').map((s) => s.trim()).filter(Boolean);
}

async function quickstart(deps: Deps, values: Values) {
  const email = values.email ?? 'owner@example.com';
  const plan = values.plan ?? 'pro';
  const credits = Number(values.credits ?? 1_000_000);
  const user = (await findUserByEmail(deps.db, email.toLowerCase())) ?? (await accounts.createUser(deps, checked(S.CreateUserBody, { email, name: 'Local owner' })));
  const wsBody = checked<{ name: string; plan: 'free' | 'starter' | 'pro' }>(S.CreateWorkspaceBody, { name: 'Quickstart workspace', plan, ownerUserId: user.id });
  const workspace = await accounts.createWorkspace(deps, { ...wsBody, ownerUserId: user.id });
  const allocation = await grantCredits(deps, workspace.id, { amountMillicents: credits, provenance: 'purchase' });
  const { key, secret } = await createKey(deps, {
    userId: user.id,
    workspaceIds: [workspace.id],
    scopes: [...SCOPES],
    operations: [...OPERATION_IDS],
    transports: ['rest', 'mcp'],
  });
  const base = deps.config.publicBaseUrl;
  return {
    text: [
      `Owner ${user.email}, personal workspace ${workspace.id} (plan ${workspace.plan}), ${allocation.amountMillicents} millicents of credits.`,
      `API key (shown once, keep it): ${secret}`,
      '',
      'Try it (with the service running: npm start):',
      `  curl -s ${base}/v1/usage -H "Authorization: Bearer ${secret}" -H "X-Service-Workspace: ${workspace.id}"`,
    ].join('\n'),
    json: { user: P.presentUser(user), workspace: P.presentWorkspace(workspace), key: P.presentKey(key), secret, allocation: P.presentAllocation(allocation) },
  };
}

async function dispatch(deps: Deps, verb: string, sub: string | undefined, v: Values): Promise<unknown> {
  const ws = one(v, 'workspace');
  switch (`${verb} ${sub ?? ''}`.trim()) {
    case 'users create':
      return { user: P.presentUser(await accounts.createUser(deps, checked(S.CreateUserBody, { email: v.email, name: v.name }))) };
    case 'orgs create':
      return { organization: P.presentOrganization(await accounts.createOrganization(deps, checked(S.CreateOrganizationBody, { name: v.name, ownerUserId: v.owner }))) };
    case 'orgs set-member':
      return { member: await accounts.setMember(deps, v.org ?? '', checked(S.AddMemberBody, { userId: v.user, role: v.role })) };
    case 'orgs remove-member':
      await accounts.removeMember(deps, v.org ?? '', v.user ?? '');
      return { removed: true };
    case 'workspaces create': {
      const body = checked<S_CreateWorkspace>(S.CreateWorkspaceBody, { name: v.name, plan: v.plan, ...(v.owner ? { ownerUserId: v.owner } : {}), ...(v.org ? { organizationId: v.org } : {}) });
      return { workspace: P.presentWorkspace(await accounts.createWorkspace(deps, body)) };
    }
    case 'workspaces settings': {
      const limits = Object.fromEntries(pairs(v.limit, 'limit').map(([k, val]) => [k, val === 'default' ? null : Number(val)]));
      const body = checked<Parameters<typeof accounts.updateWorkspaceSettings>[2]>(S.WorkspaceSettingsBody, {
        ...(v.plan ? { plan: v.plan } : {}),
        ...(Object.keys(limits).length ? { limits } : {}),
        ...(budgets(v.budget) ? { budgets: budgets(v.budget) } : {}),
      });
      return P.presentSettings(await accounts.updateWorkspaceSettings(deps, ws ?? '', body));
    }
    case 'credits grant': {
      const body = checked<{ amountMillicents: number; expiresAt?: string; provenance?: string }>(S.GrantCreditsBody, {
        amountMillicents: Number(v.amount),
        ...(v.expires ? { expiresAt: v.expires } : {}),
        ...(v.provenance ? { provenance: v.provenance } : {}),
      });
      const allocation = await grantCredits(deps, ws ?? '', {
        amountMillicents: body.amountMillicents,
        expiresAt: P.parseTimestamp(body.expiresAt) ?? null,
        ...(body.provenance ? { provenance: body.provenance } : {}),
      });
      return { allocation: P.presentAllocation(allocation) };
    }
    case 'domains add':
      return { domain: P.presentDomain(await addDomain(deps, ws ?? '', v.hostname ?? '')) };
    case 'domains verify': {
      const body = checked<{ method: 'dns' | 'http' | 'operator' }>(S.VerifyDomainBody, { method: v.method });
      return { domain: P.presentDomain(await verifyDomain(deps, ws ?? '', v.hostname ?? '', body.method)) };
    }
    case 'domains remove':
      await removeDomain(deps, ws ?? '', v.hostname ?? '');
      return { removed: true };
    case 'provider-keys set':
      return { providerKey: P.presentProviderKey(await setProviderKey(deps, ws ?? '', checked(S.ProviderKeyBody, { provider: v.provider, apiKey: v['api-key'] }))) };
    case 'keys create': {
      const body = checked<Omit<Parameters<typeof createKey>[1], 'expiresAt'> & { expiresAt?: string }>(S.CreateKeyBody, {
        userId: v.user,
        workspaceIds: v.workspace ?? [],
        scopes: csv(v.scopes, SCOPES, SCOPES),
        operations: csv(v.operations, OPERATION_IDS, OPERATION_IDS),
        transports: csv(v.transports, ['rest', 'mcp'], ['rest']),
        ...(v.expires ? { expiresAt: v.expires } : {}),
        ...(v['ip-range'] ? { ipRanges: v['ip-range'] } : {}),
        ...(budgets(v.budget) ? { budgets: budgets(v.budget) } : {}),
      });
      const { key, secret } = await createKey(deps, { ...body, expiresAt: P.parseTimestamp(body.expiresAt) ?? null });
      return { key: P.presentKey(key), secret };
    }
    case 'keys revoke':
      return { key: P.presentKey(await revokeKey(deps, v.key ?? '')) };
    default:
      throw new AppError('INVALID_REQUEST', { message: `Unknown command "${`${verb} ${sub ?? ''}`.trim()}".\n\n${CLI_USAGE}` });
  }
}

type S_CreateWorkspace = { name: string; plan: 'free' | 'starter' | 'pro'; ownerUserId?: string; organizationId?: string };

/** Runs one command; returns the process exit code. */
export async function runCli(config: Config, argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${CLI_USAGE}`);
    return 2;
  }
  const [verb, sub] = parsed.positionals;
  if (!verb || verb === 'help' || verb === '--help') {
    process.stdout.write(CLI_USAGE);
    return 0;
  }
  const deps = await createDeps({ config, secretKey: resolveSecretKey(config), epochPollMs: 0, log: undefined });
  try {
    if (verb === 'migrate') {
      process.stdout.write('migrations applied\n');
      return 0;
    }
    if (verb === 'quickstart') {
      const result = await quickstart(deps, parsed.values);
      process.stdout.write(`${result.text}\n`);
      return 0;
    }
    const result = await dispatch(deps, verb, sub, parsed.values);
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
    return 0;
  } catch (err) {
    if (err instanceof AppError) {
      process.stderr.write(`error ${err.code}: ${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await deps.close();
  }
}
