/**
 * Row locking, the one place where the dialects differ for writers. PostgreSQL takes row locks
 * (`FOR NO KEY UPDATE`); SQLite needs none because a write transaction holds the whole database
 * and Kysely runs one transaction at a time on its single connection.
 *
 * `FOR NO KEY UPDATE`, not `FOR UPDATE`: the lockers exclude each other all the same, but the
 * lock does not conflict with the key-share locks that foreign-key checks take on the referenced
 * row. With `FOR UPDATE`, a transaction that inserted a row referencing a workspace (a ledger
 * entry, an event) and then asked for the workspace's lock could deadlock with one that held the
 * lock first and waited behind that key-share lock (jobs/finish-batch.ts writes its records
 * before it takes the lock; test/job-races.test.ts caught the deadlock as a failed cancel).
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Capabilities } from './connect.js';

export function lockForUpdate<DB, TB extends keyof DB, O>(
  caps: Capabilities,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return caps.dialect === 'postgres' ? query.forNoKeyUpdate() : query;
}
