/** Job streams count a key's live slots in every workspace (connection limits apply per key too). */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('stream_slots_key_idx').on('stream_slots').columns(['key_id', 'expires_at_ms']).execute();
}
