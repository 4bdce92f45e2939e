/** SQL for capped account notifications (one of a kind per subject per UTC day, by a unique index). */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface Notification {
  id: string;
  workspaceId: string;
  kind: string;
  /** What it is about: a webhook id for `webhook.failing`. */
  subjectId: string;
  /** UTC day, YYYY-MM-DD. */
  day: string;
  message: string;
  details: Record<string, unknown>;
  createdAt: number;
}

function toNotification(r: Row<'notifications'>): Notification {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    kind: r.kind,
    subjectId: r.subject_id,
    day: r.day,
    message: r.message,
    details: JSON.parse(r.details_json) as Record<string, unknown>,
    createdAt: Number(r.created_at_ms),
  };
}

/** Inserts unless that kind, subject and day already has one; true when this call inserted it. */
export async function insertNotificationOnce(db: Db, n: Notification): Promise<boolean> {
  const r = await db
    .insertInto('notifications')
    .values({
      id: n.id,
      workspace_id: n.workspaceId,
      kind: n.kind,
      subject_id: n.subjectId,
      day: n.day,
      message: n.message,
      details_json: JSON.stringify(n.details),
      created_at_ms: n.createdAt,
    })
    .onConflict((oc) => oc.columns(['kind', 'subject_id', 'day']).doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

/** A page of a workspace's notifications, newest first, after keyset position `before` (an id). */
export async function listNotifications(db: Db, workspaceId: string, before: string | undefined, limit: number): Promise<Notification[]> {
  let q = db.selectFrom('notifications').selectAll().where('workspace_id', '=', workspaceId);
  if (before !== undefined) q = q.where('id', '<', before);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toNotification);
}
