/**
 * A workspace's test twin (lib/livemode.ts, decisions.md "Test mode"): made the first time a test
 * key or a test-mode grant needs it, in the caller's transaction, with the first test balance (a
 * generous grant, TEST_CREDITS_MILLICENTS) written as an entry of the test ledger.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { testScopeOf } from '../../lib/livemode.js';
import * as billing from '../billing/store.js';
import { insertTestTwin } from './store.js';
import type { Workspace } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** The provenance of the first test balance's allocation. */
export const TEST_GRANT_PROVENANCE = 'test_grant';

/** The test twin's id, after making it (with its first test balance) when it did not exist. */
export async function ensureTestTwin(db: Db, live: Workspace, firstGrantMillicents: number, now: number): Promise<string> {
  const twinId = testScopeOf(live.id);
  if (!(await insertTestTwin(db, live, twinId, now)) || firstGrantMillicents <= 0) return twinId;
  const grant = { id: newId(), workspaceId: twinId, amountMillicents: firstGrantMillicents, remainingMillicents: firstGrantMillicents, expiresAt: null, provenance: TEST_GRANT_PROVENANCE, createdAt: now };
  await billing.insertGrant(db, grant, newId());
  return twinId;
}

/** What a test key sees of a live workspace: the same settings, scoped to the twin. */
export function testView(live: Workspace): Workspace {
  return { ...live, id: testScopeOf(live.id) };
}
