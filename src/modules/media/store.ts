/** SQL for media items. Every read is scoped to a workspace: another workspace's id finds nothing. */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';
import type { StoredKind } from './formats.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A media item as the service sees it (the public shape is built in routes). */
export interface MediaItem {
  id: string;
  workspaceId: string;
  name: string;
  mimeType: string;
  sizeBytes: number;
  sha256: string;
  kind: StoredKind;
  createdAt: number;
}

/** A media item with where its bytes are and, for job results, which job made it. */
export interface MediaRecord extends MediaItem {
  storageKey: string;
  jobId: string | null;
}

function toRecord(r: Row<'media'>): MediaRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    name: r.name,
    mimeType: r.mime_type,
    sizeBytes: Number(r.size_bytes),
    sha256: r.sha256,
    kind: r.kind as StoredKind,
    createdAt: Number(r.created_at_ms),
    storageKey: r.storage_key,
    jobId: r.job_id,
  };
}

/** The row of a media item, as every path that records one writes it (one by one or in a batch). */
export function mediaRow(m: MediaRecord): Row<'media'> {
  return {
    id: m.id,
    workspace_id: m.workspaceId,
    name: m.name,
    mime_type: m.mimeType,
    kind: m.kind,
    size_bytes: m.sizeBytes,
    sha256: m.sha256,
    storage_key: m.storageKey,
    job_id: m.jobId,
    created_at_ms: m.createdAt,
  };
}

/** The columns of mediaRow, in one order. */
export const MEDIA_COLUMNS = Object.keys(mediaRow({} as MediaRecord)) as (keyof Row<'media'>)[];

const insertMediaQuery = prepared((db) => db.insertInto('media').values(Object.fromEntries(MEDIA_COLUMNS.map((c, i) => [c, arg(i)])) as Row<'media'>));

export async function insertMedia(db: Db, m: MediaRecord): Promise<void> {
  const row = mediaRow(m);
  await insertMediaQuery(db, ...MEDIA_COLUMNS.map((c) => row[c]));
}

export async function findMedia(db: Db, workspaceId: string, id: string): Promise<MediaRecord | undefined> {
  const r = await db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toRecord(r);
}

export async function findMediaByIds(db: Db, workspaceId: string, ids: string[]): Promise<MediaRecord[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId).where('id', 'in', ids).execute();
  return rows.map(toRecord);
}

/** Newest first; keyset on the UUIDv7 id. */
export async function pageMedia(db: Db, workspaceId: string, beforeId: string | undefined, limit: number): Promise<MediaRecord[]> {
  let q = db.selectFrom('media').selectAll().where('workspace_id', '=', workspaceId);
  if (beforeId) q = q.where('id', '<', beforeId);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toRecord);
}

/** Bytes stored by the workspace (its quota use). */
export async function sumMediaBytes(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('media')
    .select((eb) => eb.fn.sum<number>('size_bytes').as('total'))
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return Number(r?.total ?? 0);
}
