/**
 * The media library: one row per stored blob of a workspace (uploads and job results). The bytes
 * live in the blob store under `storage_key`; the row is written only after they are durable.
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('media')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('mime_type', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('size_bytes', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull())
    .addColumn('storage_key', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addCheckConstraint('media_size_ok', sql`size_bytes >= 0`)
    .execute();
  await db.schema.createIndex('media_ws_idx').on('media').columns(['workspace_id', 'id']).execute();
}
