/**
 * Operator credit adjustments (decisions.md section 6): a refund adds credits as a new allocation,
 * a debit takes credits from the allocations settlement would spend next. Either is written as
 * `adjustment` ledger entries (one per allocation touched) carrying the operator's reason and
 * provenance, in one transaction under the workspace's credit lock, so the ledger invariant
 * (ledger sum = remaining credits) holds at every commit.
 *
 * A debit never takes spendable credits below zero: it may take at most total − reserved, and only
 * from credits that have not expired (what expiry kept for older holds stays theirs). Otherwise
 * 409 INSUFFICIENT_CREDITS and nothing is written. Adjustments are not spending: budgets count
 * `usage` entries only.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { raiseCreditsLowIfBelow } from '../alerts/service.js';
import { findWorkspace } from '../accounts/store.js';
import { lockWorkspace } from '../../db/locking.js';
import { expireAllocations } from './expiry.js';
import { planDebits } from '../reservations/spending.js';
import { debitAllocation, spendableAllocations } from '../reservations/store.js';
import * as store from './store.js';
import type { Allocation, LedgerEntry } from './store.js';

export const ADJUSTMENT = 'adjustment';

export interface AdjustInput {
  /** Signed, non-zero: positive adds credits (a refund), negative takes them (a debit). */
  amountMillicents: number;
  reason: string;
  /** Where the money came from or went; default `adjustment`. */
  provenance?: string;
  /** Refunds only: when the added credits expire (default never). */
  expiresAt?: number | null;
}

export interface Adjustment {
  workspaceId: string;
  amountMillicents: number;
  reason: string;
  provenance: string;
  /** The allocation a refund created; null for a debit. */
  allocation: Allocation | null;
  transactions: LedgerEntry[];
  balance: { totalMillicents: number; reservedMillicents: number; spendableMillicents: number };
}

export async function adjustCredits(deps: Deps, workspaceId: string, input: AdjustInput): Promise<Adjustment> {
  const invalid = (message: string) => new AppError('INVALID_REQUEST', { message });
  const amount = input.amountMillicents;
  if (!Number.isSafeInteger(amount) || amount === 0) throw invalid('amountMillicents must be a non-zero whole number (negative for a debit).');
  const reason = input.reason.trim();
  if (reason === '') throw invalid('reason must not be blank.');
  const now = deps.clock.now();
  if (amount < 0 && input.expiresAt != null) throw invalid('expiresAt is for refunds (positive amounts) only.');
  if (input.expiresAt != null && input.expiresAt <= now) throw invalid('expiresAt must be in the future.');
  const provenance = input.provenance ?? ADJUSTMENT;

  return deps.db.transaction().execute(async (trx) => {
    const workspace = await findWorkspace(trx, workspaceId);
    if (!workspace) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    await lockWorkspace(trx, deps.caps, workspaceId);
    // Expiry first, so "spendable" below is what a reader of the balance sees now.
    await expireAllocations(trx, workspaceId, now);
    const entry = (allocationId: string, amountMillicents: number): LedgerEntry & { reason: string; provenance: string } => ({
      id: newId(),
      workspaceId,
      type: ADJUSTMENT,
      amountMillicents,
      allocationId,
      keyId: null,
      toolSlug: null,
      jobId: null,
      executionOrigin: null,
      createdAt: now,
      reason,
      provenance,
    });
    const transactions: LedgerEntry[] = [];
    let allocation: Allocation | null = null;
    if (amount > 0) {
      if (!Number.isSafeInteger((await store.sumRemaining(trx, workspaceId)) + amount)) {
        throw invalid(`The workspace balance would exceed ${Number.MAX_SAFE_INTEGER} millicents.`);
      }
      allocation = { id: newId(), workspaceId, amountMillicents: amount, remainingMillicents: amount, expiresAt: input.expiresAt ?? null, provenance, createdAt: now };
      await store.insertAllocation(trx, allocation);
      transactions.push(entry(allocation.id, amount));
    } else {
      const total = await store.sumLiveRemaining(trx, workspaceId, now);
      const reserved = await store.sumOpenHolds(trx, workspaceId);
      const { debits, shortfall } = planDebits(await spendableAllocations(trx, workspaceId, now), -amount, now);
      if (-amount > total - reserved || shortfall > 0) {
        throw new AppError('INSUFFICIENT_CREDITS', {
          status: 409,
          message: `A debit of ${-amount} millicents would take spendable credits below zero (spendable ${total - reserved}).`,
          details: { spendableMillicents: total - reserved, reservedMillicents: reserved },
        });
      }
      for (const d of debits) {
        await debitAllocation(trx, d.allocationId, d.amountMillicents);
        transactions.push(entry(d.allocationId, -d.amountMillicents));
      }
    }
    for (const t of transactions) await store.appendAdjustmentEntry(trx, t as LedgerEntry & { reason: string; provenance: string });
    const total = await store.sumLiveRemaining(trx, workspaceId, now);
    const reserved = await store.sumOpenHolds(trx, workspaceId);
    // A debit lowers spendable credits: credits.low in its transaction (modules/alerts).
    if (amount < 0) await raiseCreditsLowIfBelow(trx, workspaceId, workspace.lowCreditsMillicents, total - reserved, now);
    return {
      workspaceId,
      amountMillicents: amount,
      reason,
      provenance,
      allocation,
      transactions,
      balance: { totalMillicents: total, reservedMillicents: reserved, spendableMillicents: total - reserved },
    };
  });
}
