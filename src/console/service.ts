/**
 * What a signed-in owner may see and change, on the services the admin and public APIs use (no
 * second copy of a rule): workspaces come from the accounts store, keys are created, revoked and
 * rolled by modules/auth/keys.ts, which itself refuses a user who neither owns nor administers the
 * workspace (403 FORBIDDEN: an organization `member`).
 *
 * Tenant rule: a workspace the user has no part in is 404 NOT_FOUND, exactly like one that does
 * not exist, and so is a key that does not include the workspace in the path.
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import * as accounts from '../modules/accounts/store.js';
import { userManagesWorkspace } from '../modules/accounts/service.js';
import type { MemberRole, Workspace } from '../modules/accounts/types.js';
import { createKey, revokeKey, rollKey, updateKey, type CreateKeyInput, type UpdateKeyInput } from '../modules/auth/keys.js';
import * as keyStore from '../modules/auth/store.js';
import type { ApiKey } from '../modules/auth/types.js';
import { isLiveScope } from '../lib/livemode.js';

export interface ConsoleWorkspace {
  workspace: Workspace;
  /** The user's role: `owner` of a personal workspace, or the organization role. */
  role: MemberRole;
  organizationName: string | null;
}

/** A user's workspaces: personal ones, then those of the organizations they belong to. */
export async function listUserWorkspaces(deps: Deps, userId: string): Promise<ConsoleWorkspace[]> {
  const personal = await accounts.findWorkspaces(deps.db, await accounts.workspaceIdsOf(deps.db, { userId }));
  const out: ConsoleWorkspace[] = personal.map((workspace) => ({ workspace, role: 'owner', organizationName: null }));
  for (const m of await accounts.listMemberships(deps.db, userId)) {
    const ws = await accounts.findWorkspaces(deps.db, await accounts.workspaceIdsOf(deps.db, { organizationId: m.organizationId }));
    for (const workspace of ws) out.push({ workspace, role: m.role, organizationName: m.name });
  }
  return out;
}

/**
 * The workspace with the user's role in it; 404 when the user has no part in it. The console names
 * live workspaces only: a test twin's id (lib/livemode.ts) is 404 too, as on the public API, whose
 * UUID check refuses it (the console reaches test mode through `mode`, never through a twin's id).
 */
export async function visibleWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<ConsoleWorkspace> {
  const workspace = isLiveScope(workspaceId) ? await accounts.findWorkspace(deps.db, workspaceId) : undefined;
  if (workspace) {
    if (workspace.ownerUserId !== null && workspace.ownerUserId === userId) return { workspace, role: 'owner', organizationName: null };
    if (workspace.organizationId !== null) {
      const role = await accounts.findMemberRole(deps.db, workspace.organizationId, userId);
      const org = role && (await accounts.findOrganization(deps.db, workspace.organizationId));
      if (role && org) return { workspace, role, organizationName: org.name };
    }
  }
  throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
}

/** Key management is for the workspace's owners and admins (the rule createKey applies). */
async function managedWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<Workspace> {
  const { workspace } = await visibleWorkspace(deps, userId, workspaceId);
  if (!(await userManagesWorkspace(deps.db, userId, workspace))) {
    throw new AppError('FORBIDDEN', { message: 'Only owners and admins of this workspace manage its API keys; ask one of them.' });
  }
  return workspace;
}

/** The most keys one page of the console shows (newest first). */
export const KEY_PAGE_SIZE = 100;

export async function listWorkspaceKeys(deps: Deps, userId: string, workspaceId: string): Promise<ApiKey[]> {
  await managedWorkspace(deps, userId, workspaceId);
  return keyStore.pageKeys(deps.db, { workspaceId }, undefined, KEY_PAGE_SIZE);
}

export type ConsoleKeyInput = Omit<CreateKeyInput, 'userId' | 'workspaceIds'>;

/** A key of the signed-in user for this one workspace; the secret is returned once. */
export async function createWorkspaceKey(deps: Deps, userId: string, workspaceId: string, input: ConsoleKeyInput): Promise<{ key: ApiKey; secret: string }> {
  await visibleWorkspace(deps, userId, workspaceId);
  return createKey(deps, { ...input, userId, workspaceIds: [workspaceId] });
}

/**
 * A key of this workspace that the user may change: it must include the workspace (else 404), and
 * the user must manage every workspace it includes, since revoking or rolling it affects them all.
 */
export async function changeableKey(deps: Deps, userId: string, workspaceId: string, keyId: string): Promise<ApiKey> {
  await managedWorkspace(deps, userId, workspaceId);
  const key = await keyStore.findKey(deps.db, keyId);
  if (!key || !key.workspaceIds.includes(workspaceId)) throw new AppError('NOT_FOUND', { message: 'No such key in this workspace.' });
  for (const id of key.workspaceIds) {
    const ws = await accounts.findWorkspace(deps.db, id);
    if (!ws || !(await userManagesWorkspace(deps.db, userId, ws))) {
      throw new AppError('FORBIDDEN', { message: 'The key also includes a workspace you do not manage; ask the operator to change it.' });
    }
  }
  return key;
}

export async function revokeWorkspaceKey(deps: Deps, userId: string, workspaceId: string, keyId: string): Promise<ApiKey> {
  await changeableKey(deps, userId, workspaceId, keyId);
  return revokeKey(deps, keyId);
}

export async function rollWorkspaceKey(deps: Deps, userId: string, workspaceId: string, keyId: string, overlapSeconds: number): Promise<{ key: ApiKey; secret: string }> {
  await changeableKey(deps, userId, workspaceId, keyId);
  return rollKey(deps, keyId, overlapSeconds);
}

export async function updateWorkspaceKey(deps: Deps, userId: string, workspaceId: string, keyId: string, input: UpdateKeyInput): Promise<ApiKey> {
  await changeableKey(deps, userId, workspaceId, keyId);
  return updateKey(deps, keyId, input);
}
