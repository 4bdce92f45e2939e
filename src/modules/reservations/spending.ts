/**
 * Settlement as pure functions: what an attempt is charged and which allocations the charge
 * debits, by how much. One definition for every path that settles (reservations.settle one job at
 * a time, jobs/finish-batch.ts for a batch of a workspace's jobs over allocations read once); the
 * two differ only in how they read and write.
 *
 * Allocations are spent earliest expiry first, never-expiring ones last, ties by id. A hold may
 * spend only allocations that had not expired when it was admitted (its credits were reserved
 * against those): an allocation expiring at or before `heldSince` is skipped.
 */

export interface SpendableAllocation {
  id: string;
  /** Credits left, in millicents; planDebits lowers it by what it plans to debit. */
  remaining: number;
  /** Epoch milliseconds; null for credits that never expire. */
  expiresAt: number | null;
}

export interface Debit {
  allocationId: string;
  amountMillicents: number;
}

/** `allocations` sorted in spending order (a new array; the objects are the same). */
export function inSpendingOrder<T extends SpendableAllocation>(allocations: readonly T[]): T[] {
  const order = (a: SpendableAllocation) => a.expiresAt ?? Infinity;
  return [...allocations].sort((a, b) => order(a) - order(b) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

/** What an attempt that consumed `consumedMillicents` is charged against a hold of `heldMillicents`: whole millicents, never below 0, never above the hold. */
export function chargeFor(consumedMillicents: number, heldMillicents: number): number {
  return Math.max(0, Math.min(Math.floor(consumedMillicents), heldMillicents));
}

/**
 * Settles one hold: the charge (chargeFor) and its debits (planDebits), lowering the allocations'
 * `remaining`. `shortfall` > 0 means the allocations could not cover the charge (the hold's promise
 * was broken): the one-by-one path charges what they cover and logs it; a batch falls back to it.
 */
export function planSettlement(
  allocations: readonly SpendableAllocation[],
  hold: { amountMillicents: number; createdAt: number },
  consumedMillicents: number,
): { charge: number; debits: Debit[]; shortfall: number } {
  const charge = chargeFor(consumedMillicents, hold.amountMillicents);
  return { charge, ...planDebits(allocations, charge, hold.createdAt) };
}

/**
 * Plans the debits charging `amountMillicents` to `allocations` (in spending order) for a hold
 * admitted at `heldSince`, and lowers each debited allocation's `remaining` accordingly, so the
 * holds of a batch can be planned one after another over the same list. `shortfall` is what the
 * allocations could not cover (0 when the hold's promise holds).
 */
export function planDebits(allocations: readonly SpendableAllocation[], amountMillicents: number, heldSince: number): { debits: Debit[]; shortfall: number } {
  const debits: Debit[] = [];
  let left = amountMillicents;
  for (const a of allocations) {
    if (left === 0) break;
    if (a.remaining <= 0 || (a.expiresAt !== null && a.expiresAt <= heldSince)) continue;
    const part = Math.min(a.remaining, left);
    a.remaining -= part;
    left -= part;
    debits.push({ allocationId: a.id, amountMillicents: part });
  }
  return { debits, shortfall: left };
}
