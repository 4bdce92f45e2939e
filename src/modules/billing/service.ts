/**
 * Credits: allocations (amount, remaining, expiry, provenance) and the append-only ledger.
 * Invariants: the sum of a workspace's ledger amounts equals the sum of remaining credits of its
 * allocations; expired credits leave with an `expiration` entry (except what open holds admitted
 * before the expiry still need: expiry.ts); balance total counts unexpired allocations and those
 * kept parts; spendable = total − reserved.
 */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { keysetPage, type PageRequest } from '../../http/pagination.js';
import { newId } from '../../lib/ids.js';
import { findWorkspace } from '../accounts/store.js';
import { ensureTestTwin } from '../accounts/test-twins.js';
import { isLiveScope, type Mode } from '../../lib/livemode.js';
import { settleExpirations } from './expiry.js';
import * as store from './store.js';
import type { Allocation, LedgerEntry } from './store.js';

export interface GrantInput {
  amountMillicents: number;
  expiresAt?: number | null;
  provenance?: string;
  /** `test`: to the workspace's test balance (made with its first grant when it did not exist). */
  mode?: Mode;
}

export async function grantCredits(deps: Deps, workspaceId: string, input: GrantInput): Promise<Allocation> {
  const now = deps.clock.now();
  if (!Number.isSafeInteger(input.amountMillicents) || input.amountMillicents <= 0) {
    throw new AppError('INVALID_REQUEST', { message: 'amountMillicents must be a positive integer.' });
  }
  if (input.expiresAt != null && input.expiresAt <= now) throw new AppError('INVALID_REQUEST', { message: 'expiresAt must be in the future.' });
  const allocation: Allocation = {
    id: newId(),
    workspaceId,
    amountMillicents: input.amountMillicents,
    remainingMillicents: input.amountMillicents,
    expiresAt: input.expiresAt ?? null,
    provenance: input.provenance ?? 'purchase',
    createdAt: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    // Operators name the live workspace; a test twin's id is no workspace of theirs.
    const live = isLiveScope(workspaceId) ? await findWorkspace(trx, workspaceId) : undefined;
    if (!live) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    if (input.mode === 'test') workspaceId = allocation.workspaceId = await ensureTestTwin(trx, live, deps.config.testCreditsMillicents, now);
    // Balances and ledger sums are JavaScript numbers: keep every workspace total exactly representable.
    if (!Number.isSafeInteger((await store.sumRemaining(trx, workspaceId)) + allocation.amountMillicents)) {
      throw new AppError('INVALID_REQUEST', { message: `The workspace balance would exceed ${Number.MAX_SAFE_INTEGER} millicents.` });
    }
    await store.insertGrant(trx, allocation, newId());
  });
  return allocation;
}

// Expiry lives in expiry.ts; these are re-exported for the callers that know billing's service.
export { expireAllocations, settleExpirations, sweepExpirations } from './expiry.js';

export interface Balance {
  workspaceId: string;
  totalMillicents: number;
  reservedMillicents: number;
  spendableMillicents: number;
  allocations: Allocation[];
  nextCursor: string | null;
}

export async function getBalance(deps: Deps, workspaceId: string, page: PageRequest): Promise<Balance> {
  const now = deps.clock.now();
  await settleExpirations(deps, workspaceId, now);
  const [total, reserved, allocations] = await Promise.all([
    store.sumLiveRemaining(deps.db, workspaceId, now),
    store.sumOpenHolds(deps.db, workspaceId),
    keysetPage(deps, 'balance.allocations', workspaceId, page, (after, limit) => store.pageLiveAllocations(deps.db, workspaceId, now, after, limit)),
  ]);
  return {
    workspaceId,
    totalMillicents: total,
    reservedMillicents: reserved,
    spendableMillicents: total - reserved,
    allocations: allocations.items,
    nextCursor: allocations.nextCursor,
  };
}

export async function listTransactions(
  deps: Deps,
  workspaceId: string,
  page: PageRequest,
  range: store.LedgerRange = {},
): Promise<{ items: LedgerEntry[]; nextCursor: string | null }> {
  await settleExpirations(deps, workspaceId);
  return keysetPage(deps, 'transactions', workspaceId, page, (before, limit) => store.pageLedger(deps.db, workspaceId, before, limit, range));
}

/** Rows read per query of a ledger export: the export holds one chunk in memory at a time. */
export const EXPORT_CHUNK = 1000;

/** The ledger within `range`, oldest first, chunk by chunk (the CSV export; nothing else kept in memory). */
export async function* exportLedger(deps: Deps, workspaceId: string, range: store.LedgerRange, chunk = EXPORT_CHUNK): AsyncGenerator<LedgerEntry[]> {
  await settleExpirations(deps, workspaceId);
  let after: string | null = null;
  for (;;) {
    const rows = await store.ledgerAscending(deps.db, workspaceId, after, chunk, range);
    if (rows.length > 0) yield rows;
    if (rows.length < chunk) return;
    after = rows[rows.length - 1]!.id;
  }
}
