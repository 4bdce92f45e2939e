/** Jobs with leases and checkpoints, their version history, idempotency records and the event outbox. */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('key_id', 'text')
    .addColumn('operation_id', 'text', (c) => c.notNull())
    .addColumn('tool_slug', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('execution_origin', 'text')
    .addColumn('funding', 'text', (c) => c.notNull())
    .addColumn('input_json', 'text', (c) => c.notNull())
    .addColumn('output_json', 'text')
    .addColumn('output_sha256', 'text')
    .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('cost_mc', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('max_cost_mc', 'bigint', (c) => c.notNull())
    .addColumn('error_code', 'text')
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull().defaultTo(1))
    .addColumn('steps_total', 'integer', (c) => c.notNull())
    .addColumn('steps_done', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('checkpoint_json', 'text')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('started_at_ms', 'bigint')
    .addColumn('completed_at_ms', 'bigint')
    .addColumn('updated_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('run_after_ms', 'bigint', (c) => c.notNull())
    .addColumn('lease_token', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at_ms', 'bigint')
    .addColumn('recoveries', 'integer', (c) => c.notNull().defaultTo(0))
    .addCheckConstraint('jobs_cost_ok', sql`cost_mc >= 0 and max_cost_mc >= 0`)
    .execute();
  await db.schema.createIndex('jobs_ws_idx').on('jobs').columns(['workspace_id', 'id']).execute();
  await sql`create index jobs_pending_idx on jobs (run_after_ms, id) where status = 'pending'`.execute(db);
  await sql`create index jobs_processing_idx on jobs (lease_expires_at_ms) where status = 'processing'`.execute(db);
  await sql`create index jobs_active_ws_idx on jobs (workspace_id, status) where status in ('pending', 'processing')`.execute(db);

  await db.schema
    .createTable('job_versions')
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('version', 'integer', (c) => c.notNull())
    .addColumn('snapshot_json', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_versions_pk', ['job_id', 'version'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('idem_key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('response_json', 'text')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['key_id', 'workspace_id', 'idem_key'])
    .execute();
  await db.schema.createIndex('idempotency_keys_expiry_idx').on('idempotency_keys').column('expires_at_ms').execute();

  await db.schema
    .createTable('events')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data_json', 'text', (c) => c.notNull())
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('events_ws_idx').on('events').columns(['workspace_id', 'id']).execute();
}
