/** JSON shapes of operator-facing objects (admin API and command line tool share them). */
import { isLiveScope, publicWorkspaceId } from '../lib/livemode.js';
import { AppError } from '../http/errors.js';
import { toIso } from '../lib/clock.js';
import type { Organization, User, Workspace } from '../modules/accounts/types.js';
import type { ApiKey } from '../modules/auth/types.js';
import type { Allocation } from '../modules/billing/store.js';
import type { Domain } from '../modules/domains/store.js';
import type { Notification } from '../modules/notifications/store.js';
import type { ProviderKeyInfo } from '../modules/provider-keys/service.js';
import { resolveLimits } from '../modules/usage/plans.js';

export const presentUser = (u: User) => ({ id: u.id, email: u.email, name: u.name, createdAt: toIso(u.createdAt) });
export const presentOrganization = (o: Organization) => ({ id: o.id, name: o.name, createdAt: toIso(o.createdAt) });
export const presentWorkspace = (w: Workspace) => ({
  id: w.id,
  name: w.name,
  plan: w.plan,
  ownerUserId: w.ownerUserId,
  organizationId: w.organizationId,
  lowCreditsMillicents: w.lowCreditsMillicents,
  createdAt: toIso(w.createdAt),
});
export const presentSettings = (w: Workspace) => ({ workspace: presentWorkspace(w), limits: resolveLimits(w), budgets: w.budgets });
export const presentAllocation = (a: Allocation) => ({
  id: a.id,
  workspaceId: publicWorkspaceId(a.workspaceId),
  livemode: isLiveScope(a.workspaceId),
  amountMillicents: a.amountMillicents,
  remainingMillicents: a.remainingMillicents,
  expiresAt: toIso(a.expiresAt),
  provenance: a.provenance,
  createdAt: toIso(a.createdAt),
});
export const presentDomain = (d: Domain) => ({
  workspaceId: d.workspaceId,
  hostname: d.hostname,
  status: d.status,
  verificationToken: d.verificationToken,
  verifiedMethod: d.verifiedMethod,
  verifiedAt: toIso(d.verifiedAt),
  createdAt: toIso(d.createdAt),
});
export const presentProviderKey = (k: ProviderKeyInfo) => ({
  id: k.id,
  workspaceId: k.workspaceId,
  provider: k.provider,
  createdAt: toIso(k.createdAt),
  updatedAt: toIso(k.updatedAt),
});
export const presentKey = (k: ApiKey) => ({
  id: k.id,
  userId: k.userId,
  prefix: k.prefix,
  workspaceIds: k.workspaceIds,
  scopes: k.scopes,
  operations: k.operations,
  transports: k.transports,
  ipRanges: k.ipRanges,
  expiresAt: toIso(k.expiresAt),
  budgets: k.budgets,
  createdAt: toIso(k.createdAt),
  revokedAt: toIso(k.revokedAt),
  suspendedUntil: toIso(k.suspendedUntil),
  previousSecretExpiresAt: toIso(k.previousSecretExpiresAt ?? null),
  mode: k.mode,
});
export const presentNotification = (n: Notification) => ({
  id: n.id,
  workspaceId: n.workspaceId,
  kind: n.kind,
  webhookId: n.kind === 'webhook.failing' ? n.subjectId : null,
  message: n.message,
  createdAt: toIso(n.createdAt),
  details: n.details,
});

/**
 * ISO timestamp (or null/undefined) from a request into epoch ms. The date-time format also
 * accepts times no Date can hold (a leap second `23:59:60`, an offset `+05` without minutes):
 * those are a 400 here, before anything is written, never NaN stored or formatted later.
 */
export function parseTimestamp(value: string | null | undefined): number | null | undefined {
  if (value === undefined || value === null) return value;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new AppError('INVALID_REQUEST', { message: `Not a time this service can read: "${value}" (write it like 2027-01-31T12:00:00Z or with a ±HH:MM offset).` });
  }
  return ms;
}
