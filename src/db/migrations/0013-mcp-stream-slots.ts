/**
 * Standing MCP streams (GET /mcp) hold a slot per stream, so a key's cap counts its streams in
 * every API process. Apart from stream_slots: those count against the plan's job streams.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('mcp_stream_slots')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('key_id', 'text', (c) => c.notNull())
    .addColumn('expires_at_ms', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('mcp_stream_slots_key_idx').on('mcp_stream_slots').columns(['key_id', 'expires_at_ms']).execute();
}
