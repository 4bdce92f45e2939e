/**
 * Credit expiry that never takes credits promised to running jobs.
 *
 * Admission reserves a job's maximum cost against every credit that is live at that moment, and
 * settlement spends allocations earliest-expiry first. So an allocation that reaches its expiry
 * while holds admitted before that moment are still open backs those holds first: expiring it
 * whole would leave their settlement short (money lost) or let it take credits that back other
 * holds (overspending). Expiry therefore removes only the part of a due allocation that the open
 * holds admitted before its expiry do not need (with an `expiration` ledger entry) and marks the
 * allocation expiry-settled; the kept part still counts in the balance total, only those holds
 * may spend it, and whatever they leave expires when they settle.
 *
 * Every evaluation re-reads the due allocations and open holds and is idempotent. Callers hold the
 * workspace lock (PostgreSQL), which admission and settlement take too, so a hold cannot open or
 * close while its workspace's expiry is being evaluated.
 */
import type { Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { lockWorkspace } from '../../db/locking.js';
import { newId } from '../../lib/ids.js';
import * as store from './expiry-store.js';
import type { DueAllocation, OpenHoldAmount } from './expiry-store.js';
import { appendLedger } from './store.js';
import { checkCreditsLow } from '../alerts/service.js';

export interface ExpiryStep {
  allocation: DueAllocation;
  /** Credits kept for open holds admitted before the allocation expired. */
  keep: number;
  /** Credits that expire now. */
  expire: number;
}

/**
 * What to expire, given due allocations (earliest expiry first) and open holds (oldest first).
 * A hold may draw on allocations that had not expired when it was admitted; holds draw on the
 * earliest-expiring of those first, as settlement spends them. The holds eligible for a later
 * allocation include those of an earlier one, so covering them greedily in expiry order keeps
 * exactly what they can need. Steps that would change nothing are left out.
 */
export function planExpiry(due: readonly DueAllocation[], holds: readonly OpenHoldAmount[]): ExpiryStep[] {
  const steps: ExpiryStep[] = [];
  let eligible = 0;
  let next = 0;
  let covered = 0;
  for (const allocation of due) {
    while (next < holds.length && holds[next]!.createdAt < allocation.expiresAt) eligible += holds[next++]!.amount;
    const keep = Math.min(allocation.remaining, Math.max(0, eligible - covered));
    covered += keep;
    const expire = allocation.remaining - keep;
    if (expire > 0 || allocation.expirySettledAt === null) steps.push({ allocation, keep, expire });
  }
  return steps;
}

/**
 * Expires what is due in one workspace inside the caller's transaction (the caller holds the
 * workspace lock), raising credits.low when it leaves spendable credits below the workspace's
 * threshold. Returns the credits expired.
 */
export async function expireAllocations(trx: Transaction<Database>, workspaceId: string, now: number): Promise<number> {
  const due = await store.findDueAllocations(trx, workspaceId, now);
  if (due.length === 0) return 0;
  let expired = 0;
  for (const step of planExpiry(due, await store.findOpenHoldAmounts(trx, workspaceId))) {
    if (!(await store.settleAllocationExpiry(trx, step.allocation.id, step.allocation.remaining, step.keep, now))) continue;
    if (step.expire === 0) continue;
    await appendLedger(trx, {
      id: newId(),
      workspaceId,
      type: 'expiration',
      amountMillicents: -step.expire,
      allocationId: step.allocation.id,
      keyId: null,
      toolSlug: null,
      jobId: null,
      executionOrigin: null,
      createdAt: now,
    });
    expired += step.expire;
  }
  // Expired credits lower spendable ones: credits.low in this transaction (modules/alerts).
  if (expired > 0) await checkCreditsLow(trx, workspaceId, now);
  return expired;
}

/**
 * Expires what is due in one workspace in its own transaction. Cheap when nothing would change
 * (the common read path): the plan is computed first without a transaction.
 */
export async function settleExpirations(deps: Deps, workspaceId: string, now: number = deps.clock.now()): Promise<number> {
  const due = await store.findDueAllocations(deps.db, workspaceId, now);
  if (due.length === 0) return 0;
  if (planExpiry(due, await store.findOpenHoldAmounts(deps.db, workspaceId)).length === 0) return 0;
  return deps.db.transaction().execute(async (trx) => {
    await lockWorkspace(trx, deps.caps, workspaceId);
    return expireAllocations(trx, workspaceId, now);
  });
}

/**
 * Sweeps allocations that became due and were not processed yet, across workspaces (run by
 * workers). Returns how many workspaces it handled; each call makes progress, so calling it until
 * it returns less than `batch` finishes the backlog. Kept parts are re-evaluated when their holds
 * settle and on every read or admission of the workspace.
 */
export async function sweepExpirations(deps: Deps, batch = 100): Promise<number> {
  const now = deps.clock.now();
  const ids = await store.findWorkspacesWithUnsettledDue(deps.db, now, batch);
  for (const id of ids) await settleExpirations(deps, id, now);
  return ids.length;
}
