/**
 * The owners' console (issue 35): one-time sign-in links and browser sessions. Both tokens are
 * stored only as their SHA-256 (hex), like API key secrets; the unique index on the hash is how a
 * presented token is found. Times are epoch milliseconds; no dialect-specific SQL.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('console_sign_in_links')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('used_at_ms', 'bigint')
    .execute();
  await db.schema.createIndex('console_sign_in_links_expiry_idx').on('console_sign_in_links').column('expires_at_ms').execute();

  await db.schema
    .createTable('console_sessions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.id'))
    .addColumn('created_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('last_seen_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .addColumn('revoked_at_ms', 'bigint')
    .execute();
  await db.schema.createIndex('console_sessions_user_idx').on('console_sessions').column('user_id').execute();
}
