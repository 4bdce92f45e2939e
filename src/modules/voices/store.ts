/**
 * SQL for workspace voices (issue 37). Reads are scoped to a workspace (a test key's voices live in
 * the test twin, so the scope is the mode too), except `findVoiceAnywhere`, which admission uses
 * only to tell another workspace's voice (404) from an unknown id (400) and which returns nothing a
 * caller may show.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';
import type { VoiceReference } from '../../providers/types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A voice as the service sees it (the public shape is built by present.ts). */
export interface VoiceRecord extends VoiceReference {
  workspaceId: string;
  jobId: string;
  createdAt: number;
  deletedAt: number | null;
}

function toRecord(r: Row<'voices'>): VoiceRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    referenceMediaId: r.reference_media_id,
    referenceSha256: r.reference_sha256,
    provider: r.provider,
    model: r.model,
    providerVoiceId: r.provider_voice_id,
    jobId: r.job_id,
    createdAt: Number(r.created_at_ms),
    deletedAt: r.deleted_at_ms === null ? null : Number(r.deleted_at_ms),
  };
}

export async function insertVoice(db: Db, v: VoiceRecord): Promise<void> {
  await db
    .insertInto('voices')
    .values({
      id: v.id,
      workspace_id: v.workspaceId,
      name: v.name,
      reference_media_id: v.referenceMediaId,
      reference_sha256: v.referenceSha256,
      provider: v.provider,
      model: v.model,
      provider_voice_id: v.providerVoiceId,
      job_id: v.jobId,
      created_at_ms: v.createdAt,
      deleted_at_ms: v.deletedAt,
    })
    .execute();
}

/** A voice of the workspace, deleted ones included (a job admitted before a deletion finds out it happened). */
export async function findVoice(db: Db, workspaceId: string, id: string): Promise<VoiceRecord | undefined> {
  const r = await db.selectFrom('voices').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRecord(r);
}

/** The workspace a voice id belongs to, whichever it is (admission's 404 for another workspace's voice). */
export async function findVoiceWorkspace(db: Db, id: string): Promise<string | undefined> {
  const r = await db.selectFrom('voices').select('workspace_id').where('id', '=', id).executeTakeFirst();
  return r?.workspace_id;
}

/** Voices not deleted, newest first; keyset on the UUIDv7 id. */
export async function pageVoices(db: Db, workspaceId: string, beforeId: string | undefined, limit: number): Promise<VoiceRecord[]> {
  let q = db.selectFrom('voices').selectAll().where('workspace_id', '=', workspaceId).where('deleted_at_ms', 'is', null);
  if (beforeId) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toRecord);
}

/** Marks a voice of the workspace deleted; false when there is no such voice or it was deleted already. */
export async function markVoiceDeleted(db: Db, workspaceId: string, id: string, now: number): Promise<boolean> {
  const r = await db
    .updateTable('voices')
    .set({ deleted_at_ms: now })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .where('deleted_at_ms', 'is', null)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) > 0;
}
