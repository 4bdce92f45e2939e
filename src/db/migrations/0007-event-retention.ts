/**
 * Event retention: housekeeping deletes events older than EVENT_RETENTION_DAYS together with their
 * finished deliveries (src/modules/events/retention.ts). These indexes let it find old events by
 * age and an event's deliveries by event id without scanning either table.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('events_created_idx').on('events').column('created_at_ms').execute();
  await db.schema.createIndex('webhook_deliveries_event_idx').on('webhook_deliveries').column('event_id').execute();
}
