/** SQL for webhook endpoints. Every function is scoped to a workspace: another workspace's id finds nothing. */
import type { Kysely, Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import { lockForUpdate } from '../../db/locking.js';
import type { Database, Row } from '../../db/schema.js';
import type { EventType } from '../events/store.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A webhook as the service sees it; `secretEnc` is the sealed signing secret. */
export interface WebhookRecord {
  id: string;
  workspaceId: string;
  url: string;
  hostname: string;
  eventTypes: EventType[];
  enabled: boolean;
  secretEnc: string;
  createdAt: number;
  updatedAt: number;
  revokedAt: number | null;
}

export function toWebhookRecord(r: Row<'webhooks'>): WebhookRecord {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    url: r.url,
    hostname: r.hostname,
    eventTypes: JSON.parse(r.event_types_json) as EventType[],
    enabled: Number(r.enabled) === 1,
    secretEnc: r.secret_enc,
    createdAt: Number(r.created_at_ms),
    updatedAt: Number(r.updated_at_ms),
    revokedAt: r.revoked_at_ms === null ? null : Number(r.revoked_at_ms),
  };
}

export async function insertWebhook(db: Db, w: WebhookRecord): Promise<void> {
  await db
    .insertInto('webhooks')
    .values({
      id: w.id,
      workspace_id: w.workspaceId,
      url: w.url,
      hostname: w.hostname,
      event_types_json: JSON.stringify(w.eventTypes),
      enabled: w.enabled ? 1 : 0,
      secret_enc: w.secretEnc,
      created_at_ms: w.createdAt,
      updated_at_ms: w.updatedAt,
      revoked_at_ms: w.revokedAt,
    })
    .execute();
}

export async function findWebhook(db: Db, workspaceId: string, id: string): Promise<WebhookRecord | undefined> {
  const r = await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id).executeTakeFirst();
  return r && toWebhookRecord(r);
}

/** The webhook row locked for the rest of the transaction (PostgreSQL; SQLite writers are serial anyway). */
export async function lockWebhook(db: Db, caps: Capabilities, workspaceId: string, id: string): Promise<WebhookRecord | undefined> {
  const r = await lockForUpdate(caps, db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).where('id', '=', id)).executeTakeFirst();
  return r && toWebhookRecord(r);
}

/** Every webhook of the workspace, revoked ones included, oldest first. */
export async function listWebhooks(db: Db, workspaceId: string): Promise<WebhookRecord[]> {
  const rows = await db.selectFrom('webhooks').selectAll().where('workspace_id', '=', workspaceId).orderBy('id').execute();
  return rows.map(toWebhookRecord);
}

export async function countActiveWebhooks(db: Db, workspaceId: string): Promise<number> {
  const r = await db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number | string>().as('n'))
    .where('workspace_id', '=', workspaceId)
    .where('revoked_at_ms', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export interface WebhookPatch {
  url?: string;
  hostname?: string;
  eventTypes?: EventType[];
  enabled?: boolean;
  secretEnc?: string;
  revokedAt?: number;
}

export async function updateWebhook(db: Db, workspaceId: string, id: string, patch: WebhookPatch, now: number): Promise<void> {
  await db
    .updateTable('webhooks')
    .set({
      ...(patch.url !== undefined ? { url: patch.url } : {}),
      ...(patch.hostname !== undefined ? { hostname: patch.hostname } : {}),
      ...(patch.eventTypes !== undefined ? { event_types_json: JSON.stringify(patch.eventTypes) } : {}),
      ...(patch.enabled !== undefined ? { enabled: patch.enabled ? 1 : 0 } : {}),
      ...(patch.secretEnc !== undefined ? { secret_enc: patch.secretEnc } : {}),
      ...(patch.revokedAt !== undefined ? { revoked_at_ms: patch.revokedAt } : {}),
      updated_at_ms: now,
    })
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', id)
    .execute();
}

/**
 * Abandons the webhook's unfinished deliveries (revocation): pending and delivering rows become
 * failed with WEBHOOK_REVOKED. The lease token moves on, so a worker in the middle of a send can
 * no longer record its outcome over this one. Returns how many rows changed.
 */
export async function abandonDeliveries(db: Db, workspaceId: string, webhookId: string, now: number): Promise<number> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      status: 'failed',
      last_error_code: 'WEBHOOK_REVOKED',
      lease_token: eb('lease_token', '+', 1),
      lease_owner: null,
      lease_expires_at_ms: null,
      updated_at_ms: now,
    }))
    .where('workspace_id', '=', workspaceId)
    .where('webhook_id', '=', webhookId)
    .where('status', 'in', ['pending', 'delivering'])
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
