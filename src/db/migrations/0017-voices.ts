/**
 * Workspace voices (issue 37): what voice.clone made, so that speech.generate can speak with it.
 * A voice is scoped by workspace id like every workspace object (a test key's voices live in the
 * test twin: lib/livemode.ts). It names its reference audio (a media item of the same workspace,
 * with that item's sha256 as it was when the voice was made), the provider and model that cloned
 * it and the provider's own id of the clone, and the job that made it (unique: a job makes at most
 * one voice). A deleted voice keeps its row, with `deleted_at_ms`, so that jobs admitted before the
 * deletion can tell a deleted voice from one that never existed.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('voices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspaces.id'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('reference_media_id', 'text', (c) => c.notNull().references('media.id'))
    .addColumn('reference_sha256', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('model', 'text')
    .addColumn('provider_voice_id', 'text')
    .addColumn('job_id', 'text', (c) => c.notNull().unique().references('jobs.id'))
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('deleted_at_ms', 'bigint')
    .execute();
  await db.schema.createIndex('voices_ws_idx').on('voices').columns(['workspace_id', 'id']).execute();
}
