/**
 * SQL of job streams: the stream slots every API process counts against the workspace's plan
 * limit, and reads of a job's stored version history. A slot counts while `expires_at_ms` is in
 * the future; its stream extends it on a heartbeat, so a crashed process's slots stop counting
 * on their own.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Live slots of a workspace, or of a key in every workspace (connection limits apply per key too). */
export async function countLiveSlots(db: Db, owner: { workspaceId: string } | { keyId: string }, now: number): Promise<number> {
  const r = await db
    .selectFrom('stream_slots')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('workspaceId' in owner ? 'workspace_id' : 'key_id', '=', 'workspaceId' in owner ? owner.workspaceId : owner.keyId)
    .where('expires_at_ms', '>', now)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

/** Removes the workspace's slots that stopped counting (their stream's process died). */
export async function deleteExpiredSlots(db: Db, workspaceId: string, now: number): Promise<void> {
  await db.deleteFrom('stream_slots').where('workspace_id', '=', workspaceId).where('expires_at_ms', '<=', now).execute();
}

/** Housekeeping: slots of every workspace whose heartbeat stopped (crashed processes). */
export async function deleteAllExpiredSlots(db: Db, now: number): Promise<void> {
  await db.deleteFrom('stream_slots').where('expires_at_ms', '<=', now).execute();
}

export async function insertSlot(db: Db, slot: Row<'stream_slots'>): Promise<void> {
  await db.insertInto('stream_slots').values(slot).execute();
}

/** Extends a live slot; false when it is gone (expired and removed, or released). */
export async function extendSlot(db: Db, workspaceId: string, id: string, expiresAtMs: number): Promise<boolean> {
  const r = await db.updateTable('stream_slots').set({ expires_at_ms: expiresAtMs }).where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

export async function deleteSlot(db: Db, workspaceId: string, id: string): Promise<void> {
  await db.deleteFrom('stream_slots').where('workspace_id', '=', workspaceId).where('id', '=', id).execute();
}

export interface StoredVersion {
  version: number;
  snapshot: Record<string, unknown>;
}

/** Stored versions of a job in (after, upTo], oldest first, at most `limit`. */
export async function versionsBetween(db: Db, jobId: string, after: number, upTo: number, limit: number): Promise<StoredVersion[]> {
  const rows = await db
    .selectFrom('job_versions')
    .select(['version', 'snapshot_json'])
    .where('job_id', '=', jobId)
    .where('version', '>', after)
    .where('version', '<=', upTo)
    .orderBy('version', 'asc')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ version: Number(r.version), snapshot: JSON.parse(r.snapshot_json) as Record<string, unknown> }));
}
