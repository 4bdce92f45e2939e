/**
 * Operator changes (issue 19): a rolled key keeps its previous secret's hash until the overlap the
 * operator chose ends (then that secret is refused), and operator credit adjustments record their
 * reason and provenance on their ledger entries.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('api_keys').addColumn('previous_secret_hash', 'text').execute();
  await db.schema.alterTable('api_keys').addColumn('previous_secret_expires_at_ms', 'bigint').execute();
  await db.schema.createIndex('api_keys_previous_secret_hash_idx').on('api_keys').column('previous_secret_hash').execute();
  // Operator reads: a user's keys, a user's or an organization's workspaces.
  await db.schema.createIndex('api_keys_user_idx').on('api_keys').column('user_id').execute();
  await db.schema.createIndex('workspaces_owner_user_idx').on('workspaces').column('owner_user_id').execute();
  await db.schema.createIndex('workspaces_organization_idx').on('workspaces').column('organization_id').execute();
  await db.schema.alterTable('credit_transactions').addColumn('reason', 'text').execute();
  await db.schema.alterTable('credit_transactions').addColumn('provenance', 'text').execute();
}
