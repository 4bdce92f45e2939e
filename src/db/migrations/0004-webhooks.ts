/**
 * Webhooks and their deliveries, capped account notifications and SSE stream slots.
 *
 * A delivery is one (webhook, event) pair, created in the same transaction as the event (fan-out
 * in the outbox), so an event is never lost between being stored and being scheduled. Pending
 * deliveries are claimed with a lease like jobs (`lease_token` fences a worker that lost it).
 * Stream slots are rows so that every API process of a deployment counts the same open streams;
 * a slot whose heartbeat stopped (crashed process) stops counting after `expires_at_ms`.
 */
import { PostgresAdapter, sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('webhooks')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('hostname', 'text', (c) => c.notNull())
    .addColumn('event_types_json', 'text', (c) => c.notNull())
    .addColumn('enabled', 'integer', (c) => c.notNull())
    .addColumn('secret_enc', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at_ms', 'bigint')
    .execute();
  await db.schema.createIndex('webhooks_ws_idx').on('webhooks').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull().references('webhooks.id'))
    .addColumn('event_id', 'text', (c) => c.notNull().references('events.id'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('replay_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error_code', 'text')
    .addColumn('next_attempt_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('lease_token', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at_ms', 'bigint')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('delivered_at_ms', 'bigint')
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_pair_idx')
    .on('webhook_deliveries')
    .columns(['webhook_id', 'event_id'])
    .unique()
    .execute();
  await db.schema.createIndex('webhook_deliveries_list_idx').on('webhook_deliveries').columns(['webhook_id', 'id']).execute();
  await sql`create index webhook_deliveries_due_idx on webhook_deliveries (next_attempt_at_ms, id) where status = 'pending'`.execute(db);
  await sql`create index webhook_deliveries_leased_idx on webhook_deliveries (lease_expires_at_ms) where status = 'delivering'`.execute(db);

  await db.schema
    .createTable('notifications')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('message', 'text', (c) => c.notNull())
    .addColumn('details_json', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  // The cap: at most one notification of a kind per subject (webhook) per UTC day.
  await db.schema.createIndex('notifications_cap_idx').on('notifications').columns(['kind', 'subject_id', 'day']).unique().execute();
  await db.schema.createIndex('notifications_ws_idx').on('notifications').columns(['workspace_id', 'id']).execute();

  await db.schema
    .createTable('stream_slots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('stream_slots_ws_idx').on('stream_slots').columns(['workspace_id', 'expires_at_ms']).execute();

  // PostgreSQL only: the event feed's commit-safe position, the id of the writing transaction
  // (src/modules/events/feed-store.ts). SQLite commits one transaction at a time and needs none.
  if (db.getExecutor().adapter instanceof PostgresAdapter) {
    await sql`alter table events add column tx_id xid8 not null default pg_current_xact_id()`.execute(db);
    await sql`create index events_feed_idx on events (workspace_id, tx_id, id)`.execute(db);
  }
}
