/** SQL for a workspace's own provider keys. The key is only ever stored sealed. */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface ProviderKeyRow {
  id: string;
  workspaceId: string;
  provider: string;
  sealedKey: string;
  createdAt: number;
  updatedAt: number;
}

export async function findProviderKey(db: Db, workspaceId: string, provider: string): Promise<ProviderKeyRow | undefined> {
  const r = await db
    .selectFrom('provider_keys')
    .selectAll()
    .where('workspace_id', '=', workspaceId)
    .where('provider', '=', provider)
    .executeTakeFirst();
  return (
    r && {
      id: r.id,
      workspaceId: r.workspace_id,
      provider: r.provider,
      sealedKey: r.sealed_key,
      createdAt: r.created_at_ms,
      updatedAt: r.updated_at_ms,
    }
  );
}

/** Inserts the row unless the workspace already has a key for this provider; false when it had. */
export async function insertProviderKey(db: Db, row: ProviderKeyRow): Promise<boolean> {
  const r = await db
    .insertInto('provider_keys')
    .values({
      id: row.id,
      workspace_id: row.workspaceId,
      provider: row.provider,
      sealed_key: row.sealedKey,
      created_at_ms: row.createdAt,
      updated_at_ms: row.updatedAt,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'provider']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

export async function updateProviderKey(db: Db, workspaceId: string, id: string, sealedKey: string, now: number): Promise<void> {
  await db.updateTable('provider_keys').set({ sealed_key: sealedKey, updated_at_ms: now }).where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

/** A workspace's provider keys by provider name: names and dates only (the sealed key is not read). */
export async function listProviderKeys(db: Db, workspaceId: string): Promise<Omit<ProviderKeyRow, 'sealedKey'>[]> {
  const rows = await db
    .selectFrom('provider_keys')
    .select(['id', 'workspace_id', 'provider', 'created_at_ms', 'updated_at_ms'])
    .where('workspace_id', '=', workspaceId)
    .orderBy('provider')
    .execute();
  return rows.map((r) => ({ id: r.id, workspaceId: r.workspace_id, provider: r.provider, createdAt: Number(r.created_at_ms), updatedAt: Number(r.updated_at_ms) }));
}
