/**
 * Ledger invariants, asserted after every test that moves money:
 * sum of ledger amounts = sum of remaining credits over allocations (granted − spent − expired);
 * reserved = sum of open holds; spendable = total − reserved ≥ 0; and the cost rollup (issue 36)
 * holds exactly the ledger summed per hour and per day.
 */
import assert from 'node:assert/strict';
import type { Deps } from '../../src/deps.js';
import * as store from '../../src/modules/billing/store.js';
import { assertRollupMatchesLedger } from './costs-oracle.js';

export async function assertLedgerInvariants(deps: Deps, workspaceId: string): Promise<void> {
  const ledger = await store.sumLedger(deps.db, workspaceId);
  const remaining = await deps.db
    .selectFrom('credit_allocations')
    .select((eb) => eb.fn.sum<number>('remaining_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  assert.equal(ledger, Number(remaining?.total ?? 0), 'ledger sum equals remaining credits of all allocations');
  const total = await store.sumLiveRemaining(deps.db, workspaceId, deps.clock.now());
  const reserved = await store.sumOpenHolds(deps.db, workspaceId);
  // sumOpenHolds reads the trigger-kept total (migration 0006): it must equal the rows.
  const open = await deps.db
    .selectFrom('credit_holds')
    .select((eb) => eb.fn.sum<number>('amount_mc').as('total'))
    .where('workspace_id', '=', workspaceId)
    .where('released_at_ms', 'is', null)
    .executeTakeFirst();
  assert.equal(reserved, Number(open?.total ?? 0), 'reserved equals the sum of open holds');
  assert.ok(total - reserved >= 0, `spendable ${total - reserved} is not negative`);
  await assertRollupMatchesLedger(deps, workspaceId);
}
