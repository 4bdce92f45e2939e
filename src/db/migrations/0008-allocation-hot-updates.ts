/**
 * Spending credits updates an allocation's `remaining_mc` at every settlement, so one busy
 * workspace rewrites the same row many times a second. The expiry index of 0005 named
 * `remaining_mc` in its predicate, which made every such update write new entries into every
 * index of the table (PostgreSQL can update in place, "HOT", only when no indexed column
 * changes); index scans then walked thousands of dead versions of the row until vacuum came.
 * The index now covers the allocations that expire at all; queries for due allocations still use
 * it (a comparison on `expires_at_ms` implies it is not null, on both databases).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await sql`drop index credit_allocations_expiry_idx`.execute(db);
  await sql`create index credit_allocations_expiry_idx on credit_allocations (expires_at_ms) where expires_at_ms is not null`.execute(db);
}
