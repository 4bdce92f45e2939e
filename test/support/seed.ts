/** Seed helpers: tenants built through the same services the admin API uses. */
import type { Deps } from '../../src/deps.js';
import * as accounts from '../../src/modules/accounts/service.js';
import type { Plan, User, Workspace } from '../../src/modules/accounts/types.js';
import { createKey, type CreateKeyInput } from '../../src/modules/auth/keys.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import type { ApiKey } from '../../src/modules/auth/types.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { OPERATION_IDS } from '../../src/operations/ids.js';
import { randomBytes } from 'node:crypto';

export interface Tenant {
  user: User;
  workspace: Workspace;
  key: ApiKey;
  secret: string;
}

export interface TenantOptions {
  plan?: Plan;
  credits?: number;
  key?: Partial<Omit<CreateKeyInput, 'userId' | 'workspaceIds'>>;
}

export function uniqueEmail(): string {
  return `user-${randomBytes(6).toString('hex')}@example.com`;
}

export async function seedTenant(deps: Deps, options: TenantOptions = {}): Promise<Tenant> {
  const user = await accounts.createUser(deps, { email: uniqueEmail(), name: 'Test user' });
  const workspace = await accounts.createWorkspace(deps, { name: 'Test workspace', plan: options.plan ?? 'pro', ownerUserId: user.id });
  if (options.credits) await grantCredits(deps, workspace.id, { amountMillicents: options.credits });
  const { key, secret } = await createKey(deps, {
    userId: user.id,
    workspaceIds: [workspace.id],
    scopes: [...SCOPES],
    operations: [...OPERATION_IDS],
    transports: ['rest', 'mcp'],
    ...options.key,
  });
  return { user, workspace, key, secret };
}

export async function seedKey(deps: Deps, userId: string, workspaceIds: string[], options: Partial<CreateKeyInput> = {}) {
  return createKey(deps, {
    userId,
    workspaceIds,
    scopes: [...SCOPES],
    operations: [...OPERATION_IDS],
    transports: ['rest'],
    ...options,
  });
}

/** The body of `POST /admin/v1/keys` for an all-powerful REST key (every scope and operation); `extra` overrides fields. */
export function keyBody(userId: string, workspaceIds: string[], extra: Record<string, unknown> = {}) {
  return { userId, workspaceIds, scopes: [...SCOPES], operations: [...OPERATION_IDS], transports: ['rest'], ...extra };
}
