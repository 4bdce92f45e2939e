/** Seed helpers: tenants built through the same services the admin API uses. */
import type { Deps } from '../../src/deps.js';
import * as accounts from '../../src/modules/accounts/service.js';
import type { Plan, User, Workspace } from '../../src/modules/accounts/types.js';
import { createKey, type CreateKeyInput } from '../../src/modules/auth/keys.js';
import { SCOPES } from '../../src/modules/auth/scopes.js';
import type { ApiKey } from '../../src/modules/auth/types.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import { ensureTestTwin } from '../../src/modules/accounts/test-twins.js';
import { scopeFor } from '../../src/lib/livemode.js';
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
  /**
   * The key's mode (default live). `test`: a test key (wask_test_), simulated work, and `credits`
   * are the test balance: its first grant is exactly `credits` (none when 0), not
   * TEST_CREDITS_MILLICENTS, so that money checks count from a known figure.
   */
  mode?: 'live' | 'test';
  credits?: number;
  key?: Partial<Omit<CreateKeyInput, 'userId' | 'workspaceIds'>>;
}

export function uniqueEmail(): string {
  return `user-${randomBytes(6).toString('hex')}@example.com`;
}

export async function seedTenant(deps: Deps, options: TenantOptions = {}): Promise<Tenant> {
  const user = await accounts.createUser(deps, { email: uniqueEmail(), name: 'Test user' });
  const workspace = await accounts.createWorkspace(deps, { name: 'Test workspace', plan: options.plan ?? 'pro', ownerUserId: user.id });
  const mode = options.mode ?? 'live';
  // A test twin made here has no first grant: the grant below is its first.
  if (mode === 'test') await ensureTestTwin(deps.db, workspace, 0, deps.clock.now());
  if (options.credits) await grantCredits(deps, workspace.id, { amountMillicents: options.credits, mode });
  const { key, secret } = await createKey(deps, {
    userId: user.id,
    workspaceIds: [workspace.id],
    scopes: [...SCOPES],
    operations: [...OPERATION_IDS],
    transports: ['rest', 'mcp'],
    mode,
    ...options.key,
  });
  return { user, workspace, key, secret };
}

/**
 * The workspace id a tenant's rows are stored under: the workspace's own id for a live key, its
 * test twin's for a test key (src/lib/livemode.ts). Use it where a test reads the database or
 * checks ledger invariants; the API always takes and shows `t.workspace.id`.
 */
export function scopeOf(t: { workspace: { id: string }; key: { mode: 'live' | 'test' } }): string {
  return scopeFor(t.workspace.id, t.key.mode);
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
