/**
 * What a signed-in user may see and change of a workspace's media, domains and webhooks, on the
 * services the public and admin APIs use (modules/media, modules/domains, modules/webhooks; no
 * second copy of a rule). Only the console's own rules live here:
 *
 * - Tenants: a workspace the user has no part in is 404 NOT_FOUND, like one that does not exist
 *   (visibleWorkspace); a webhook, delivery or media id of another workspace is 404 as well, since
 *   every service call is scoped to the workspace of the path.
 * - Roles (spec, organization roles; decisions.md section 6): every member sees the workspace's
 *   media, domains, webhooks and deliveries and may upload and download media (workspace content,
 *   as a member's key would); only the owner of a personal workspace and an organization's owners
 *   and admins change domains and webhooks (add and check a domain, create, rotate and revoke a
 *   webhook, replay a delivery): a member is 403 FORBIDDEN, the rule keys follow
 *   (userManagesWorkspace).
 * - Modes (decisions.md "Test mode"): `mode: 'test'` works in the workspace's test twin (its test
 *   media, webhooks and deliveries), as a test key would; objects of the other mode are 404. A
 *   change in test mode makes the twin first when the workspace has none yet (with its first test
 *   balance, as a first test key does).
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import type { Mode } from '../lib/livemode.js';
import { userManagesWorkspace } from '../modules/accounts/service.js';
import { ensureTestTwin, testView } from '../modules/accounts/test-twins.js';
import type { Workspace } from '../modules/accounts/types.js';
import { visibleWorkspace, type ConsoleWorkspace } from './service.js';

/** The workspace and the user's role in it, whatever the role (404 when the user has no part in it). */
export async function readableWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<ConsoleWorkspace & { canManage: boolean }> {
  const seen = await visibleWorkspace(deps, userId, workspaceId);
  return { ...seen, canManage: await userManagesWorkspace(deps.db, userId, seen.workspace) };
}

/** The workspace, when the user may change its domains and webhooks (owner or admin); a member is 403. */
export async function webhookManagedWorkspace(deps: Deps, userId: string, workspaceId: string): Promise<Workspace> {
  const { workspace, canManage } = await readableWorkspace(deps, userId, workspaceId);
  if (!canManage) {
    throw new AppError('FORBIDDEN', { message: 'Only owners and admins of this workspace change its domains and webhooks; ask one of them.' });
  }
  return workspace;
}

/**
 * The workspace as a key of `mode` sees it: itself, or its test twin (lib/livemode.ts), made
 * first when `create` and it does not exist yet (reads of a workspace without one find nothing).
 */
export async function inMode(deps: Deps, workspace: Workspace, mode: Mode | undefined, create = false): Promise<Workspace> {
  if (mode !== 'test') return workspace;
  if (create) await ensureTestTwin(deps.db, workspace, deps.config.testCreditsMillicents, deps.clock.now());
  return testView(workspace);
}
