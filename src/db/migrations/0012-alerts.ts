/**
 * Alerts as events (issue 19): the workspace setting `lowCreditsMillicents` (null: no credits.low
 * alert), and an index for housekeeping's scan of keys that expire within the alert window.
 * Alerts need no table of their own: each is a capped notification, whose unique index (kind,
 * subject, day) makes it fire at most once across processes (src/modules/alerts/).
 */
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workspaces').addColumn('low_credits_mc', 'bigint').execute();
  await sql`create index api_keys_expiry_idx on api_keys (expires_at_ms) where expires_at_ms is not null and revoked_at_ms is null`.execute(db);
}
