/**
 * SQL of the standing MCP streams' slots (table mcp_stream_slots): one row per open stream, so a
 * key's cap counts its streams in every API process. A slot counts while `expires_at_ms` is
 * ahead; the hub of the process that holds it extends it on a heartbeat, so a crashed process's
 * slots stop counting on their own. Apart from stream_slots, which count against the plan's
 * job streams.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Capabilities } from '../db/connect.js';
import { lockForUpdate } from '../db/locking.js';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Ids per statement: well under SQLite's and PostgreSQL's bound on parameters. */
const IDS_PER_STATEMENT = 500;

/**
 * Takes a slot for the key unless it already holds `limit` live ones; returns the live count
 * when refused. The key's row lock serialises concurrent opens of one key (a single writer needs
 * none), so two cannot both take the last slot.
 */
export async function takeSlot(db: Kysely<Database>, caps: Capabilities, slot: { id: string; keyId: string; expiresAtMs: number }, limit: number, now: number): Promise<{ taken: true } | { taken: false; open: number }> {
  return db.transaction().execute(async (trx) => {
    await lockForUpdate(caps, trx.selectFrom('api_keys').select('id').where('id', '=', slot.keyId)).execute();
    await trx.deleteFrom('mcp_stream_slots').where('key_id', '=', slot.keyId).where('expires_at_ms', '<=', now).execute();
    const row = await trx
      .selectFrom('mcp_stream_slots')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('key_id', '=', slot.keyId)
      .executeTakeFirstOrThrow();
    const open = Number(row.n);
    if (open >= limit) return { taken: false, open };
    await trx.insertInto('mcp_stream_slots').values({ id: slot.id, key_id: slot.keyId, expires_at_ms: slot.expiresAtMs }).execute();
    return { taken: true };
  });
}

/** Extends the given slots; returns the ids still there (a slot missing was expired and removed by another open, or by housekeeping). */
export async function extendSlots(db: Db, ids: readonly string[], expiresAtMs: number): Promise<Set<string>> {
  const alive = new Set<string>();
  for (let i = 0; i < ids.length; i += IDS_PER_STATEMENT) {
    const rows = await db
      .updateTable('mcp_stream_slots')
      .set({ expires_at_ms: expiresAtMs })
      .where('id', 'in', ids.slice(i, i + IDS_PER_STATEMENT))
      .returning('id')
      .execute();
    for (const r of rows) alive.add(r.id);
  }
  return alive;
}

export async function deleteSlot(db: Db, id: string): Promise<void> {
  await db.deleteFrom('mcp_stream_slots').where('id', '=', id).execute();
}

/** Housekeeping: slots whose heartbeat stopped (crashed processes). */
export async function deleteExpiredSlots(db: Db, now: number): Promise<void> {
  await db.deleteFrom('mcp_stream_slots').where('expires_at_ms', '<=', now).execute();
}
