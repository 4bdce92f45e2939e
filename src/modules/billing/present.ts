/**
 * The public shapes of the balance and of ledger entries, and their presenters: one definition for
 * the public API (billing/routes.ts) and the owners' console, which answer the same objects.
 */
import { Type } from 'typebox';
import { Livemode, Millicents, NullableTimestamp, Timestamp, Uuid } from '../../http/schemas.js';
import { toIso } from '../../lib/clock.js';
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import type { Balance } from './service.js';
import type { LedgerEntry } from './store.js';

const NextCursor = Type.Union([Type.String(), Type.Null()]);

export const BalanceSchema = Type.Object({
  workspaceId: Uuid,
  livemode: Livemode,
  totalMillicents: Millicents,
  reservedMillicents: Millicents,
  spendableMillicents: Millicents,
  allocations: Type.Array(
    Type.Object({
      id: Uuid,
      remainingMillicents: Millicents,
      expiresAt: NullableTimestamp,
      provenance: Type.String(),
      createdAt: Timestamp,
      livemode: Livemode,
    }),
  ),
  nextCursor: NextCursor,
});

export const TransactionSchema = Type.Object({
  id: Uuid,
  type: Type.String({ description: 'purchase, usage, expiration or adjustment (an operator correction)' }),
  amountMillicents: Type.Integer({ description: 'Signed; negative for spending.' }),
  toolSlug: Type.Union([Type.String(), Type.Null()]),
  jobId: Type.Union([Uuid, Type.Null()]),
  executionOrigin: Type.Union([Type.String(), Type.Null()]),
  createdAt: Timestamp,
  // Added fields (issue 36): who and what an entry of a job was for.
  keyId: Type.Union([Uuid, Type.Null()], { description: 'The API key whose job the entry belongs to; null for entries of no job.' }),
  operationId: Type.Union([Type.String(), Type.Null()], { description: 'The operation the job ran; null for entries of no job.' }),
  livemode: Livemode,
});

export const TransactionListSchema = Type.Object({ items: Type.Array(TransactionSchema), nextCursor: NextCursor });

/** The balance as the API answers it: the workspace id the client knows, and the mode. */
export function presentBalance(b: Balance) {
  const livemode = isLiveScope(b.workspaceId);
  return {
    ...b,
    workspaceId: publicWorkspaceId(b.workspaceId),
    livemode,
    allocations: b.allocations.map((a) => ({ id: a.id, remainingMillicents: a.remainingMillicents, expiresAt: toIso(a.expiresAt), provenance: a.provenance, createdAt: toIso(a.createdAt), livemode })),
  };
}

/** A ledger entry as the API answers it. */
export function presentTransaction(t: LedgerEntry) {
  return {
    id: t.id,
    type: t.type,
    amountMillicents: t.amountMillicents,
    toolSlug: t.toolSlug,
    jobId: t.jobId,
    executionOrigin: t.executionOrigin,
    createdAt: toIso(t.createdAt),
    keyId: t.keyId,
    operationId: t.operationId ?? null,
    livemode: isLiveScope(t.workspaceId),
  };
}
