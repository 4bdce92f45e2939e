/** Usage points (admission and the usage report of GET /v1/usage). */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { periodRange, secondsUntil, type Period } from '../../lib/periods.js';
import type { BudgetCeilings, Workspace } from '../accounts/types.js';
import { sumKeyOpenHolds, sumKeySpent, sumOpenHolds, sumSpent } from '../billing/store.js';
import type { ApiKey } from '../auth/types.js';
import type { WindowView } from './meter.js';
import { resolveLimits } from './plans.js';

/** Charges `points` to the workspace or throws 429 RATE_LIMITED naming the window that refused. */
export async function chargePoints(deps: Deps, workspace: Workspace, points: number): Promise<WindowView> {
  const limits = resolveLimits(workspace);
  const result = await deps.usage.charge(workspace.id, points, limits);
  if (!result.ok) {
    const now = deps.clock.now();
    throw new AppError('RATE_LIMITED', {
      message: result.limit === 'POINTS_MINUTE' ? 'Usage points per minute exhausted.' : 'Usage points per month exhausted.',
      retryAfter: secondsUntil(now, result.resetsAt),
      details: { limit: result.limit, resetsAt: new Date(result.resetsAt).toISOString() },
      headers: rateLimitHeaders(now, result.minute),
    });
  }
  return result.minute;
}

export async function peekMinute(deps: Deps, workspace: Workspace): Promise<WindowView> {
  return (await deps.usage.peek(workspace.id, resolveLimits(workspace))).minute;
}

/** RateLimit-* headers for the minute window (decisions.md: every authenticated response). */
export function rateLimitHeaders(now: number, minute: WindowView): Record<string, string> {
  return {
    'RateLimit-Limit': String(minute.limit),
    'RateLimit-Remaining': String(Math.max(0, minute.limit - minute.used)),
    'RateLimit-Reset': String(secondsUntil(now, minute.resetsAt)),
  };
}

export interface BudgetReport {
  scope: 'key' | 'workspace';
  period: 'day' | 'week' | 'month';
  limitMillicents: number;
  spentMillicents: number;
  reservedMillicents: number;
  resetsAt: number;
}

const PERIODS: { period: BudgetReport['period']; range: Period; field: keyof BudgetCeilings }[] = [
  { period: 'day', range: 'day', field: 'dailyMillicents' },
  { period: 'week', range: 'week', field: 'weeklyMillicents' },
  { period: 'month', range: 'month', field: 'monthlyMillicents' },
];

/**
 * Every configured ceiling of the key and the workspace, with what is spent in the current UTC
 * period and held by open reservations against it. The same sums admission checks: a key's
 * ceilings cover its spending in all its workspaces, a workspace's ceilings every key and
 * transport in it; open holds count in every period.
 */
export async function budgetReports(deps: Deps, workspace: Workspace, key: ApiKey): Promise<BudgetReport[]> {
  const now = deps.clock.now();
  const reports: BudgetReport[] = [];
  const owners = [
    {
      scope: 'key' as const,
      ceilings: key.budgets,
      spent: (from: number, to: number) => sumKeySpent(deps.db, key.id, from, to),
      held: () => sumKeyOpenHolds(deps.db, key.id),
    },
    {
      scope: 'workspace' as const,
      ceilings: workspace.budgets,
      spent: (from: number, to: number) => sumSpent(deps.db, workspace.id, null, from, to),
      held: () => sumOpenHolds(deps.db, workspace.id),
    },
  ];
  for (const owner of owners) {
    for (const p of PERIODS) {
      const limit = owner.ceilings[p.field];
      if (limit === null || limit === undefined) continue;
      const range = periodRange(p.range, now);
      const [spent, reserved] = await Promise.all([owner.spent(range.start, range.end), owner.held()]);
      reports.push({ scope: owner.scope, period: p.period, limitMillicents: limit, spentMillicents: spent, reservedMillicents: reserved, resetsAt: range.end });
    }
  }
  return reports;
}

export async function usageReport(deps: Deps, workspace: Workspace, key: ApiKey) {
  const limits = resolveLimits(workspace);
  const { minute, month } = await deps.usage.peek(workspace.id, limits);
  return {
    workspaceId: workspace.id,
    plan: workspace.plan,
    points: {
      minuteLimit: minute.limit,
      minuteUsed: minute.used,
      minuteResetsAt: minute.resetsAt,
      monthlyLimit: month.limit,
      monthlyUsed: month.used,
      monthlyResetsAt: month.resetsAt,
    },
    budgets: await budgetReports(deps, workspace, key),
    streams: { enabled: limits.streams > 0, maximum: limits.streams },
  };
}
