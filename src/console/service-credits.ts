/**
 * Test credits from the console (decisions.md "Test mode"): an owner adds make-believe credits to
 * the workspace's test balance, on the operator's own service (billing's grantCredits with
 * `mode: 'test'`, which makes the test twin with its first grant when it did not exist). Only the
 * owner of a personal workspace and an organization's owners and admins may (the rule of every
 * console change: a member is 403 FORBIDDEN); another user's workspace is 404. Live credits are
 * never granted here: they are the operator's (admin API, CLI).
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import type { Allocation } from '../modules/billing/store.js';
import { grantCredits } from '../modules/billing/service.js';
import { readableWorkspace } from './service-webhooks.js';

/** The provenance of the allocations owners add from the console. */
export const OWNER_TEST_GRANT_PROVENANCE = 'owner_test_grant';

/** Adds `amountMillicents` to the test balance of the live workspace `workspaceId` (bounds: the route's schema). */
export async function grantTestCredits(deps: Deps, userId: string, workspaceId: string, amountMillicents: number): Promise<Allocation> {
  const { workspace, canManage } = await readableWorkspace(deps, userId, workspaceId);
  if (!canManage) throw new AppError('FORBIDDEN', { message: 'Only owners and admins of this workspace add test credits; ask one of them.' });
  return grantCredits(deps, workspace.id, { amountMillicents, mode: 'test', provenance: OWNER_TEST_GRANT_PROVENANCE });
}
