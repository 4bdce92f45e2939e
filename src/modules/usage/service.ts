/** Usage points (admission and the usage report of GET /v1/usage). */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { windowIso } from '../../lib/clock.js';
import { periodRange, secondsUntil, type Period } from '../../lib/periods.js';
import { hasBudgetCeilings, type BudgetCeilings, type Workspace } from '../accounts/types.js';
import { sumKeyOpenHolds, sumKeySpent, sumOpenHolds, sumSpent } from '../billing/store.js';
import type { ApiKey } from '../auth/types.js';
import type { ChargeResult, LimitName, WindowView } from './meter.js';
import type { Attribution } from './history.js';
import { resolveLimits, type Limits } from './plans.js';
import type { MaybePromise } from '../auth/service.js';

const REFUSAL_MESSAGES: Record<LimitName, string> = {
  POINTS_MINUTE: 'Usage points per minute exhausted.',
  POINTS_MONTH: 'Usage points per month exhausted.',
};

/** The last 429 built per window kind: shared by every refusal with the same window and Retry-After. */
const lastRefusal: Partial<Record<LimitName, { resetsAt: number; retryAfter: number; error: AppError }>> = {};

/**
 * The 429 RATE_LIMITED of a refused charge without RateLimit headers (the caller sets those):
 * one shared error per window and second, so a flood of refused requests allocates nothing.
 */
export function rateLimitRefusal(now: number, limit: LimitName, resetsAt: number): AppError {
  const retryAfter = secondsUntil(now, resetsAt);
  const last = lastRefusal[limit];
  if (last && last.resetsAt === resetsAt && last.retryAfter === retryAfter) return last.error;
  const error = new AppError('RATE_LIMITED', { message: REFUSAL_MESSAGES[limit], retryAfter, details: { limit, resetsAt: windowIso(resetsAt) } });
  lastRefusal[limit] = { resetsAt, retryAfter, error };
  return error;
}

/** The 429 of a refused charge, naming the window that refused, with Retry-After and RateLimit headers. */
export function rateLimitedError(now: number, refused: Extract<ChargeResult, { ok: false }>): AppError {
  return new AppError('RATE_LIMITED', {
    message: REFUSAL_MESSAGES[refused.limit],
    retryAfter: secondsUntil(now, refused.resetsAt),
    details: { limit: refused.limit, resetsAt: windowIso(refused.resetsAt) },
    headers: rateLimitHeaders(now, refused.minute),
  });
}

/** Charges `points` to the workspace or throws 429 RATE_LIMITED naming the window that refused. */
export async function chargePoints(deps: Deps, workspace: Workspace, points: number, by?: Attribution): Promise<WindowView> {
  const result = await deps.usage.charge(workspace.id, points, resolveLimits(workspace), by);
  if (!result.ok) throw rateLimitedError(deps.clock.now(), result);
  return result.minute;
}

/**
 * chargePoints() without waiting, for callers inside a write transaction (which must not read
 * the counters from the database): undefined when the workspace's counters are not in memory;
 * load them with loadPoints() outside the transaction first.
 */
export function chargePointsNow(deps: Deps, workspace: Workspace, points: number, by?: Attribution): Extract<ChargeResult, { ok: true }> | undefined {
  const result = deps.usage.chargeNow(workspace.id, points, resolveLimits(workspace), by);
  if (result && !result.ok) throw rateLimitedError(deps.clock.now(), result);
  return result;
}

/** Gives back points charged by chargePointsNow for work that did not happen (UsageMeter.refundNow). */
export function refundPoints(deps: Deps, workspace: Workspace, points: number, charged: Extract<ChargeResult, { ok: true }>, by?: Attribution): void {
  deps.usage.refundNow(workspace.id, points, charged, by);
}

/** Brings the workspace's point counters into memory (a no-op when they are). */
export async function loadPoints(deps: Deps, workspace: Workspace): Promise<void> {
  if (!deps.usage.peekNow(workspace.id, resolveLimits(workspace))) await deps.usage.peek(workspace.id, resolveLimits(workspace));
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
  return budgetReportsOf(deps, { key, workspace });
}

/** The budget reports of a key's ceilings, a workspace's, or both (operator reads show one of them). */
export async function budgetReportsOf(deps: Deps, of: { key?: ApiKey; workspace?: Workspace }): Promise<BudgetReport[]> {
  const { key, workspace } = of;
  const now = deps.clock.now();
  const reports: BudgetReport[] = [];
  const owners = [
    ...(key
      ? [
          {
            scope: 'key' as const,
            ceilings: key.budgets,
            spent: (from: number, to: number) => sumKeySpent(deps.db, key.id, from, to),
            held: () => sumKeyOpenHolds(deps.db, key.id),
          },
        ]
      : []),
    ...(workspace
      ? [
          {
            scope: 'workspace' as const,
            ceilings: workspace.budgets,
            spent: (from: number, to: number) => sumSpent(deps.db, workspace.id, null, from, to),
            held: () => sumOpenHolds(deps.db, workspace.id),
          },
        ]
      : []),
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

export interface UsageReport {
  workspaceId: string;
  plan: string;
  points: {
    minuteLimit: number;
    minuteUsed: number;
    minuteResetsAt: number;
    monthlyLimit: number;
    monthlyUsed: number;
    monthlyResetsAt: number;
  };
  budgets: BudgetReport[];
  streams: { enabled: boolean; maximum: number };
}

function buildReport(workspace: Workspace, limits: Limits, windows: { minute: WindowView; month: WindowView }, budgets: BudgetReport[]): UsageReport {
  const { minute, month } = windows;
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
    budgets,
    streams: { enabled: limits.streams > 0, maximum: limits.streams },
  };
}

/**
 * The report of GET /v1/usage. Synchronous in the common case (the counters are in memory after
 * the request's own charge, and no budget ceiling needs a ledger sum).
 */
export function usageReport(deps: Deps, workspace: Workspace, key: ApiKey): MaybePromise<UsageReport> {
  const limits = resolveLimits(workspace);
  const windows = deps.usage.peekNow(workspace.id, limits);
  if (windows && !hasBudgetCeilings(key.budgets) && !hasBudgetCeilings(workspace.budgets)) return buildReport(workspace, limits, windows, []);
  return (async () => buildReport(workspace, limits, windows ?? (await deps.usage.peek(workspace.id, limits)), await budgetReports(deps, workspace, key)))();
}
