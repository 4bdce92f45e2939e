/**
 * Row locking, the one place where the backends differ for writers. With several writers
 * (PostgreSQL server) a decision's rows are locked (`FOR NO KEY UPDATE`); a single writer
 * (embedded SQLite, PGlite) needs none: one transaction runs at a time on its one connection,
 * and an SQLite write transaction holds the whole database.
 *
 * `FOR NO KEY UPDATE`, not `FOR UPDATE`: the lockers exclude each other all the same, but the
 * lock does not conflict with the key-share locks that foreign-key checks take on the referenced
 * row. With `FOR UPDATE`, a transaction that inserted a row referencing a workspace (a ledger
 * entry, an event) and then asked for the workspace's lock could deadlock with one that held the
 * lock first and waited behind that key-share lock (jobs/finish-batch.ts writes its records
 * before it takes the lock; test/jobs/job-races.test.ts caught the deadlock as a failed cancel).
 */
import type { Kysely, SelectQueryBuilder } from 'kysely';
import type { Capabilities } from './connect.js';
import type { Database } from './schema.js';

export function lockForUpdate<DB, TB extends keyof DB, O>(
  caps: Capabilities,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return caps.singleWriter ? query : query.forNoKeyUpdate();
}

/**
 * Locks the workspace row until the transaction ends: every decision about a workspace's money,
 * queue, keys, media quota and webhooks is taken under it, so two never interleave. A transaction
 * takes it before any other lock of the workspace's rows (the Idempotency-Key claim, the API key
 * of a budgeted admission, job rows), so no two wait for each other in a cycle. `trx` must be a
 * transaction; nothing is sent with a single writer.
 */
export async function lockWorkspace(trx: Kysely<Database>, caps: Capabilities, workspaceId: string): Promise<void> {
  if (caps.singleWriter) return;
  await trx.selectFrom('workspaces').select('id').where('id', '=', workspaceId).forNoKeyUpdate().execute();
}
