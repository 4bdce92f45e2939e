/**
 * What an alert is, as pure functions: which budget thresholds an admission crosses, and the
 * subject and day that cap each alert (docs/decisions.md, "Alerts").
 *
 * Every alert is stored as a capped notification whose unique index (kind, subject, day) lets it
 * be written once, whichever process and transaction gets there first; the day names the period
 * the cap is for:
 * - budget.threshold_crossed: subject workspace + scope (+ key) + period + threshold, day = the
 *   first day of the budget's period (so once per threshold and period);
 * - credits.low: subject workspace, day = the UTC day (once per day while low);
 * - allocation.expiring: subject allocation, day = its expiry day (once per allocation);
 * - key.expiring: subject workspace + key + expiry instant, day = the expiry day (once per key,
 *   workspace and expiry; an expiry the operator moves is a new one);
 * - key.suspended: subject workspace + key, day = the UTC day (once per key and workspace a day);
 * - webhook.failing: subject webhook, day = the UTC day (notifications/service.ts).
 */
import { toIso } from '../../lib/clock.js';
import { periodRange, type Period } from '../../lib/periods.js';
import type { AlertEventType } from '../events/store.js';

/** Percentages of a budget at which budget.threshold_crossed is raised. */
export const BUDGET_THRESHOLDS = [50, 80, 100] as const;
export type ThresholdPercent = (typeof BUDGET_THRESHOLDS)[number];

/** How long before an allocation or a key expires its `*.expiring` alert is raised. */
export const EXPIRY_NOTICE_MS = 7 * 86_400_000;

/** Whether spendable credits are below the workspace's low-credits threshold (null: no threshold). */
export function isCreditsLow(thresholdMillicents: number | null, spendableMillicents: number): boolean {
  return thresholdMillicents !== null && spendableMillicents < thresholdMillicents;
}

export function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** One alert: the event (type and data) and the capped notification that makes it fire once. */
export interface Alert {
  workspaceId: string;
  type: AlertEventType;
  /** With type and day, the cap (unique in the notifications table). */
  subject: string;
  day: string;
  message: string;
  data: Record<string, unknown>;
}

export type BudgetPeriodLabel = 'day' | 'week' | 'month';

export interface BudgetCrossing {
  scope: 'key' | 'workspace';
  keyId: string | null;
  period: BudgetPeriodLabel;
  thresholdPercent: ThresholdPercent;
  spentMillicents: number;
  /** Open holds after the admission's own. */
  reservedMillicents: number;
  limitMillicents: number;
}

/**
 * The thresholds a hold takes the committed amount (spent in the period plus reserved) across:
 * below p % of the limit before, at or above it after. Exact in integers (BigInt: p × limit can
 * pass 2^53).
 */
export function thresholdsCrossed(before: number, after: number, limit: number): ThresholdPercent[] {
  const b = BigInt(before) * 100n;
  const a = BigInt(after) * 100n;
  return BUDGET_THRESHOLDS.filter((p) => {
    const mark = BigInt(p) * BigInt(limit);
    return b < mark && a >= mark;
  });
}

export function budgetAlert(workspaceId: string, c: BudgetCrossing, now: number): Alert {
  const start = periodRange(c.period as Period, now).start;
  const owner = c.scope === 'key' ? `key ${c.keyId}'s` : "workspace's";
  return {
    workspaceId,
    type: 'budget.threshold_crossed',
    subject: c.scope === 'key' ? `${workspaceId}:key:${c.keyId}:${c.period}:${c.thresholdPercent}` : `${workspaceId}:workspace:${c.period}:${c.thresholdPercent}`,
    day: utcDay(start),
    message:
      `The ${owner} ${c.period} budget reached ${c.thresholdPercent} %: ${c.spentMillicents} millicents spent and ` +
      `${c.reservedMillicents} reserved of ${c.limitMillicents}.`,
    data: {
      budget: c.scope === 'key' ? { scope: 'key', keyId: c.keyId, period: c.period } : { scope: 'workspace', period: c.period },
      thresholdPercent: c.thresholdPercent,
      spentMillicents: c.spentMillicents,
      reservedMillicents: c.reservedMillicents,
      limitMillicents: c.limitMillicents,
    },
  };
}

export function creditsLowAlert(workspaceId: string, spendableMillicents: number, thresholdMillicents: number, now: number): Alert {
  return {
    workspaceId,
    type: 'credits.low',
    subject: workspaceId,
    day: utcDay(now),
    message: `Spendable credits (${spendableMillicents} millicents) are below the workspace's low-credits threshold of ${thresholdMillicents}.`,
    data: { spendableMillicents, thresholdMillicents },
  };
}

/** The allocation as GET /v1/balance lists it. */
export interface ExpiringAllocation {
  id: string;
  workspaceId: string;
  remainingMillicents: number;
  expiresAt: number;
  provenance: string;
  createdAt: number;
}

export function allocationExpiringAlert(a: ExpiringAllocation): Alert {
  return {
    workspaceId: a.workspaceId,
    type: 'allocation.expiring',
    subject: a.id,
    day: utcDay(a.expiresAt),
    message: `${a.remainingMillicents} millicents of credits (allocation ${a.id}) expire at ${toIso(a.expiresAt)}.`,
    data: {
      allocation: { id: a.id, remainingMillicents: a.remainingMillicents, expiresAt: toIso(a.expiresAt), provenance: a.provenance, createdAt: toIso(a.createdAt) },
    },
  };
}

/** The subject of key.expiring: the SQL of the sweep builds the same text (alerts/store.ts). */
export const keyExpiringSubject = (workspaceId: string, keyId: string, expiresAt: number) => `${workspaceId}:${keyId}:${expiresAt}`;

export function keyExpiringAlert(workspaceId: string, keyId: string, expiresAt: number): Alert {
  return {
    workspaceId,
    type: 'key.expiring',
    subject: keyExpiringSubject(workspaceId, keyId, expiresAt),
    day: utcDay(expiresAt),
    message: `API key ${keyId} expires at ${toIso(expiresAt)}.`,
    data: { keyId, expiresAt: toIso(expiresAt) },
  };
}

export function keySuspendedAlert(workspaceId: string, keyId: string, until: number, now: number): Alert {
  return {
    workspaceId,
    type: 'key.suspended',
    subject: `${workspaceId}:${keyId}`,
    day: utcDay(now),
    message: `API key ${keyId} is suspended until ${toIso(until)} after repeated authorization failures.`,
    data: { keyId, until: toIso(until) },
  };
}
