/**
 * Row locking, the one place where the dialects differ for writers. PostgreSQL takes row locks
 * (`FOR UPDATE`); SQLite needs none because a write transaction holds the whole database and
 * Kysely runs one transaction at a time on its single connection.
 */
import type { SelectQueryBuilder } from 'kysely';
import type { Capabilities } from './connect.js';

export function lockForUpdate<DB, TB extends keyof DB, O>(
  caps: Capabilities,
  query: SelectQueryBuilder<DB, TB, O>,
): SelectQueryBuilder<DB, TB, O> {
  return caps.dialect === 'postgres' ? query.forUpdate() : query;
}
