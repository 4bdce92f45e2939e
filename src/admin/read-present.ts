/** JSON shapes of the operator's reads (read-schemas.ts), built field by field: nothing private leaves. */
import { toIso } from '../lib/clock.js';
import type { Member } from '../modules/accounts/store.js';
import type { Workspace } from '../modules/accounts/types.js';
import type { LedgerEntry } from '../modules/billing/store.js';
import type { Adjustment } from '../modules/billing/adjustments.js';
import { readCheckpoint } from '../modules/jobs/lifecycle.js';
import type { JobRow } from '../modules/jobs/store.js';
import type { BudgetReport } from '../modules/usage/service.js';
import type { Delivery } from '../modules/webhooks/delivery-store.js';
import { presentDelivery } from '../modules/webhooks/delivery-routes.js';
import type { WebhookRecord } from '../modules/webhooks/store.js';
import { resolveLimits } from '../modules/usage/plans.js';
import type { AdminJobRow } from './reads.js';
import { presentAllocation, presentWorkspace } from './present.js';

const num = (v: unknown) => Number(v);
const maybeIso = (v: number | string | null | undefined) => (v === null || v === undefined ? null : toIso(Number(v)));

export const presentMember = (m: Member) => ({ organizationId: m.organizationId, userId: m.userId, role: m.role, email: m.email, name: m.name, createdAt: toIso(m.createdAt) });

export const presentBudgetUsage = (b: BudgetReport) => ({
  scope: b.scope,
  period: b.period,
  limitMillicents: b.limitMillicents,
  spentMillicents: b.spentMillicents,
  reservedMillicents: b.reservedMillicents,
  resetsAt: toIso(b.resetsAt),
});

export function presentWorkspaceDetail(d: { workspace: Workspace; budgetUsage: BudgetReport[]; balance: { totalMillicents: number; reservedMillicents: number; spendableMillicents: number } }) {
  return {
    workspace: presentWorkspace(d.workspace),
    limits: resolveLimits(d.workspace),
    limitOverrides: d.workspace.limitOverrides,
    budgets: d.workspace.budgets,
    budgetUsage: d.budgetUsage.map(presentBudgetUsage),
    balance: d.balance,
  };
}

/** Provider and model of the latest attempt: recorded with its checkpoint, else named by the stored result. */
function providerOf(row: AdminJobRow): { provider: string | null; model: string | null } {
  const cp = readCheckpoint(row as unknown as JobRow);
  if (cp.provider !== undefined) return { provider: cp.provider, model: cp.model ?? null };
  if (row.output_json) {
    try {
      const result = JSON.parse(row.output_json) as { provider?: unknown; model?: unknown };
      return { provider: typeof result.provider === 'string' ? result.provider : null, model: typeof result.model === 'string' ? result.model : null };
    } catch {
      // A result that is not JSON names no provider.
    }
  }
  return { provider: null, model: null };
}

export function presentAdminJob(row: AdminJobRow) {
  return {
    id: row.id,
    workspaceId: row.workspace_id,
    keyId: row.key_id,
    operationId: row.operation_id,
    toolSlug: row.tool_slug,
    status: row.status,
    executionOrigin: row.execution_origin,
    funding: row.funding,
    ...providerOf(row),
    attempt: num(row.attempt),
    recoveries: num(row.recoveries),
    stepsTotal: num(row.steps_total),
    stepsDone: num(row.steps_done),
    progress: { percentage: Math.round(num(row.progress) * 100) / 100 },
    costMillicents: num(row.cost_mc),
    maximumCostMillicents: num(row.max_cost_mc),
    errorCode: row.error_code,
    version: num(row.version),
    outputSha256: row.output_sha256,
    createdAt: toIso(num(row.created_at_ms)),
    startedAt: maybeIso(row.started_at_ms),
    completedAt: maybeIso(row.completed_at_ms),
    updatedAt: toIso(num(row.updated_at_ms)),
    runAfter: toIso(num(row.run_after_ms)),
    leaseExpiresAt: maybeIso(row.lease_expires_at_ms),
  };
}

export function presentAdminJobDetail(row: AdminJobRow) {
  return { ...presentAdminJob(row), input: row.input_json ? (JSON.parse(row.input_json) as unknown) : null };
}

export const presentTransaction = (t: LedgerEntry) => ({
  id: t.id,
  workspaceId: t.workspaceId,
  type: t.type,
  amountMillicents: t.amountMillicents,
  allocationId: t.allocationId,
  keyId: t.keyId,
  toolSlug: t.toolSlug,
  operationId: t.operationId ?? null,
  jobId: t.jobId,
  executionOrigin: t.executionOrigin,
  reason: t.reason ?? null,
  provenance: t.provenance ?? null,
  createdAt: toIso(t.createdAt),
});

export const presentAdjustment = (a: Adjustment) => ({
  adjustment: {
    workspaceId: a.workspaceId,
    amountMillicents: a.amountMillicents,
    reason: a.reason,
    provenance: a.provenance,
    allocation: a.allocation && presentAllocation(a.allocation),
    transactions: a.transactions.map(presentTransaction),
  },
  balance: a.balance,
});

/** The delivery as the public API shows it, plus when its next attempt is due. */
export const presentAdminDelivery = (d: Delivery) => ({ ...presentDelivery(d), nextAttemptAt: toIso(d.nextAttemptAt) });

export const presentAdminWebhook = (w: { webhook: WebhookRecord; recentDeliveries: Delivery[] }) => ({
  id: w.webhook.id,
  workspaceId: w.webhook.workspaceId,
  url: w.webhook.url,
  eventTypes: w.webhook.eventTypes,
  enabled: w.webhook.enabled,
  createdAt: toIso(w.webhook.createdAt),
  updatedAt: toIso(w.webhook.updatedAt),
  revokedAt: toIso(w.webhook.revokedAt),
  recentDeliveries: w.recentDeliveries.map(presentAdminDelivery),
});

export const presentProviderKeyName = (k: { id: string; workspaceId: string; provider: string; createdAt: number; updatedAt: number }) => ({
  id: k.id,
  workspaceId: k.workspaceId,
  provider: k.provider,
  createdAt: toIso(k.createdAt),
  updatedAt: toIso(k.updatedAt),
});
