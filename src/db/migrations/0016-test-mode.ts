/**
 * Test mode (issue 34): a key's mode, and a workspace's test twin (lib/livemode.ts), a row of its
 * own so every table that references workspaces holds test objects unchanged; the twin names the
 * live workspace it belongs to, and the operator's and owners' lists leave twins out.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('mode', 'text', (c) => c.notNull().defaultTo('live')).execute();
  await db.schema.alterTable('workspaces').addColumn('live_workspace_id', 'text', (c) => c.references('workspaces.id')).execute();
  await db.schema.createIndex('workspaces_live_workspace_idx').on('workspaces').column('live_workspace_id').execute();
}
