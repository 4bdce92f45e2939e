/**
 * Credit expiry that never takes credits promised to running jobs.
 *
 * `expiry_settled_at_ms` marks an allocation whose expiry has been processed: what remains of it
 * afterwards backs open holds admitted before it expired and still counts in the balance total,
 * until those holds settle (src/modules/billing/expiry.ts). The partial index serves the
 * expiry sweep, which looks for due allocations that still hold credits.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('credit_allocations').addColumn('expiry_settled_at_ms', 'bigint').execute();
  await sql`create index credit_allocations_expiry_idx on credit_allocations (expires_at_ms) where remaining_mc > 0`.execute(db);
}

