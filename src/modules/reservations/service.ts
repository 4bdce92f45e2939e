/**
 * Reservations (holds) and settlement, always inside the caller's transaction together with the
 * job row they belong to. Admission (runs/admission-rules.ts) decides against spendable credits
 * (402); the hold then checks every budget ceiling of the key and the workspace (429
 * BUDGET_EXCEEDED) and holds the job's bounded maximum cost; open holds count toward admission in
 * every period, also after a period changes. A hold that takes a budget across 50, 80 or 100 % or
 * leaves spendable credits below the workspace's low-credits threshold raises its alert in the
 * same transaction (modules/alerts). Settlement charges the actual cost (never above the hold),
 * spending allocations earliest-expiry first, writes one `usage` ledger entry and releases the
 * hold.
 */
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { periodRange, secondsUntil, type Period } from '../../lib/periods.js';
import type { BudgetCeilings, Workspace } from '../accounts/types.js';
import type { ApiKey } from '../auth/types.js';
import { expireAllocations } from '../billing/service.js';
import { appendLedger, sumKeyOpenHolds, sumKeySpent, sumLiveRemaining, sumOpenHolds, sumSpent, usageEntry, type UsageSource } from '../billing/store.js';
import * as store from './store.js';
import { planSettlement } from './spending.js';
import { raiseBudgetAlerts, raiseCreditsLowIfBelow } from '../alerts/service.js';
import { thresholdsCrossed, type BudgetCrossing } from '../alerts/rules.js';

type Trx = Transaction<Database>;

export interface ReserveRequest {
  workspace: Workspace;
  key: ApiKey | null;
  jobId: string;
  maximumMillicents: number;
}

const PERIODS: { field: keyof BudgetCeilings; period: Period; name: 'DAY' | 'WEEK' | 'MONTH'; label: 'day' | 'week' | 'month' }[] = [
  { field: 'dailyMillicents', period: 'day', name: 'DAY', label: 'day' },
  { field: 'weeklyMillicents', period: 'week', name: 'WEEK', label: 'week' },
  { field: 'monthlyMillicents', period: 'month', name: 'MONTH', label: 'month' },
];

/**
 * 429 BUDGET_EXCEEDED unless the job's maximum fits every ceiling; otherwise the thresholds
 * (50, 80, 100 %) its hold takes a budget's committed amount (spent in the period plus reserved)
 * across, for budget.threshold_crossed (modules/alerts).
 */
async function checkBudgets(trx: Trx, now: number, req: ReserveRequest): Promise<BudgetCrossing[]> {
  const crossings: BudgetCrossing[] = [];
  const owners = [
    { scope: 'key' as const, ceilings: req.key?.budgets, held: () => sumKeyOpenHolds(trx, req.key!.id), spent: (from: number, to: number) => sumKeySpent(trx, req.key!.id, from, to) },
    { scope: 'workspace' as const, ceilings: req.workspace.budgets, held: () => sumOpenHolds(trx, req.workspace.id), spent: (from: number, to: number) => sumSpent(trx, req.workspace.id, null, from, to) },
  ];
  for (const owner of owners) {
    if (!owner.ceilings) continue;
    let held: number | undefined;
    for (const p of PERIODS) {
      const limit = owner.ceilings[p.field];
      if (limit === null || limit === undefined) continue;
      const range = periodRange(p.period, now);
      held ??= await owner.held();
      const spent = await owner.spent(range.start, range.end);
      if (spent + held + req.maximumMillicents > limit) {
        const limitName = `${owner.scope === 'key' ? 'KEY' : 'WORKSPACE'}_BUDGET_${p.name}`;
        throw new AppError('BUDGET_EXCEEDED', {
          message: `The ${owner.scope} ${p.label} budget does not permit this operation.`,
          retryAfter: secondsUntil(now, range.end),
          details: {
            limit: limitName,
            scope: owner.scope,
            period: p.label,
            resetsAt: new Date(range.end).toISOString(),
            limitMillicents: limit,
            spentMillicents: spent,
            reservedMillicents: held,
            requiredMillicents: req.maximumMillicents,
          },
        });
      }
      for (const thresholdPercent of thresholdsCrossed(spent + held, spent + held + req.maximumMillicents, limit)) {
        crossings.push({
          scope: owner.scope,
          keyId: owner.scope === 'key' ? req.key!.id : null,
          period: p.label,
          thresholdPercent,
          spentMillicents: spent,
          reservedMillicents: held + req.maximumMillicents,
          limitMillicents: limit,
        });
      }
    }
  }
  return crossings;
}

/**
 * Spendable credits (live minus held) for an admission, under the workspace lock the caller took.
 * Allocations past their expiry are expired first (their credits are no longer spendable), unless
 * `read` holds the sums the caller already read under that lock and nothing was due then.
 */
export async function spendableCredits(trx: Trx, workspaceId: string, now: number, read?: { dueAllocations: boolean; liveMillicents: number; heldMillicents: number }): Promise<number> {
  if (read && !read.dueAllocations) return read.liveMillicents - read.heldMillicents;
  await expireAllocations(trx, workspaceId, now);
  const [total, reserved] = await Promise.all([sumLiveRemaining(trx, workspaceId, now), sumOpenHolds(trx, workspaceId)]);
  return total - reserved;
}

/**
 * Holds the maximum cost of a job that admission decided credits fund (runs/admission-rules.ts,
 * which refused it already when `spendableBefore` does not cover it): 429 BUDGET_EXCEEDED unless
 * it fits every budget ceiling of the key and the workspace; then the hold, and the alerts it
 * raises, in the caller's transaction. The caller has locked the workspace (and key) rows.
 */
export async function hold(trx: Trx, now: number, req: ReserveRequest, spendableBefore: number): Promise<void> {
  const crossings = await checkBudgets(trx, now, req);
  await store.insertHold(trx, { id: newId(), workspaceId: req.workspace.id, jobId: req.jobId, keyId: req.key?.id ?? null, amountMillicents: req.maximumMillicents }, now);
  // Alerts of this hold, in its transaction (modules/alerts): usually nothing to write.
  if (crossings.length > 0) await raiseBudgetAlerts(trx, req.workspace.id, crossings, now);
  await raiseCreditsLowIfBelow(trx, req.workspace.id, req.workspace.lowCreditsMillicents, spendableBefore - req.maximumMillicents, now);
}

/** The job whose hold settles (what its `usage` entry names: billing/store.ts UsageSource). */
export interface SettleRequest extends UsageSource {
  /** What the provider work consumed; charged up to the open hold. */
  consumedMillicents: number;
}

/**
 * Charges consumed work against the job's open hold and releases the hold. Returns what was
 * charged. Without an open hold (already settled) nothing is charged: settling twice is a no-op.
 * The caller holds the workspace lock (db/locking.ts lockWorkspace), the lock admission and expiry take,
 * so the hold closes while nobody weighs it (billing/expiry.ts).
 */
export async function settle(deps: Deps, trx: Trx, now: number, req: SettleRequest): Promise<number> {
  const plan = await planSettle(trx, req.workspaceId, req.jobId, req.consumedMillicents);
  return plan ? applySettlement(deps, trx, now, plan, req) : 0;
}

/** What settling a job's open hold will do, read before anything is written (settle's reads). */
export interface SettlementPlan {
  holdId: string;
  /** What the settlement charges (the consumption up to the hold, less any shortfall). */
  charged: number;
  debits: { allocationId: string; amountMillicents: number }[];
  shortfall: number;
}

/**
 * The reads of settle: the job's open hold and the allocations it draws on, and the charge they
 * give; undefined without an open hold (nothing to charge). Applied with applySettlement in the
 * same transaction, under the workspace lock the caller took first, so nothing it read can change
 * in between: a finish reads it before its update of the job row and writes the charge into that
 * same update instead of updating the row a second time.
 */
export async function planSettle(trx: Trx, workspaceId: string, jobId: string, consumedMillicents: number): Promise<SettlementPlan | undefined> {
  const hold = await store.findOpenHold(trx, jobId);
  if (!hold) return undefined;
  const allocations = await store.spendableAllocations(trx, workspaceId, hold.createdAt);
  const { charge, debits, shortfall } = planSettlement(allocations, hold, consumedMillicents);
  return { holdId: hold.id, charged: charge - shortfall, debits, shortfall };
}

/** The writes of settle for a plan read in this transaction; returns what was charged. */
export async function applySettlement(deps: Deps, trx: Trx, now: number, plan: SettlementPlan, req: Omit<SettleRequest, 'consumedMillicents'>): Promise<number> {
  const { debits, shortfall, charged } = plan;
  for (const d of debits) await store.debitAllocation(trx, d.allocationId, d.amountMillicents);
  if (shortfall > 0) deps.log.error({ jobId: req.jobId, shortfall }, 'settlement found fewer credits than the hold promised');
  if (charged > 0) await appendLedger(trx, usageEntry(req, charged, newId(), now));
  await store.releaseHold(trx, plan.holdId, now);
  // Credits expiry kept for this hold and that it did not spend expire now.
  await expireAllocations(trx, req.workspaceId, now);
  return charged;
}
