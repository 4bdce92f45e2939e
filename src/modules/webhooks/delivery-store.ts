/**
 * SQL of webhook deliveries. Every write a worker makes after claiming is conditional on the
 * delivery still being `delivering` under the lease token it claimed (fencing): a worker whose
 * lease expired and was recovered by another changes nothing.
 */
import type { Kysely, Transaction, Updateable } from 'kysely';
import type { Database, DeliveryStatus, Row, WebhookDeliveriesTable } from '../../db/schema.js';
import { finishSucceededRows, succeededUnderLease } from './delivery-sql.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A delivery as the API shows it (times in epoch ms). */
export interface Delivery {
  id: string;
  workspaceId: string;
  webhookId: string;
  eventId: string;
  status: DeliveryStatus;
  attempts: number;
  replayCount: number;
  lastStatusCode: number | null;
  lastErrorCode: string | null;
  nextAttemptAt: number;
  createdAt: number;
  deliveredAt: number | null;
}

export function toDelivery(r: Row<'webhook_deliveries'>): Delivery {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    webhookId: r.webhook_id,
    eventId: r.event_id,
    status: r.status,
    attempts: Number(r.attempts),
    replayCount: Number(r.replay_count),
    lastStatusCode: r.last_status_code === null ? null : Number(r.last_status_code),
    lastErrorCode: r.last_error_code,
    nextAttemptAt: Number(r.next_attempt_at_ms),
    createdAt: Number(r.created_at_ms),
    deliveredAt: r.delivered_at_ms === null ? null : Number(r.delivered_at_ms),
  };
}

/** A page of one webhook's deliveries, newest first, after keyset position `before` (an id). */
export async function listDeliveries(db: Db, workspaceId: string, webhookId: string, before: string | undefined, limit: number): Promise<Delivery[]> {
  let q = db.selectFrom('webhook_deliveries').selectAll().where('webhook_id', '=', webhookId).where('workspace_id', '=', workspaceId);
  if (before !== undefined) q = q.where('id', '<', before);
  const rows = await q.orderBy('id', 'desc').limit(limit).execute();
  return rows.map(toDelivery);
}

export async function findDelivery(db: Db, workspaceId: string, webhookId: string, deliveryId: string): Promise<Delivery | undefined> {
  const r = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('id', '=', deliveryId)
    .where('webhook_id', '=', webhookId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
  return r && toDelivery(r);
}

/** The webhook columns delivery needs (workspace-scoped: another workspace's webhook is absent). */
export async function findWebhookForDelivery(db: Db, workspaceId: string, webhookId: string) {
  return db
    .selectFrom('webhooks')
    .select(['id', 'workspace_id', 'url', 'hostname', 'enabled', 'revoked_at_ms'])
    .where('id', '=', webhookId)
    .where('workspace_id', '=', workspaceId)
    .executeTakeFirst();
}

/**
 * Puts a failed delivery back in the queue as a replay (conditional on it still being failed with
 * the replay count the caller checked, so two concurrent replays cannot both pass the limit).
 */
export async function markReplayed(db: Db, d: Delivery, now: number): Promise<Delivery | undefined> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', replay_count: d.replayCount + 1, next_attempt_at_ms: now, delivered_at_ms: null, updated_at_ms: now })
    .where('id', '=', d.id)
    .where('status', '=', 'failed')
    .where('replay_count', '=', d.replayCount)
    .returningAll()
    .executeTakeFirst();
  return r && toDelivery(r);
}

/** Records the end of an attempt under the claimed lease; false when the lease was lost. */
export async function finishAttempt(
  db: Db,
  id: string,
  leaseToken: number,
  patch: Updateable<WebhookDeliveriesTable>,
): Promise<boolean> {
  const r = await db
    .updateTable('webhook_deliveries')
    .set({ ...patch, lease_owner: null, lease_expires_at_ms: null })
    .where('id', '=', id)
    .where('status', '=', 'delivering')
    .where('lease_token', '=', leaseToken)
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/**
 * Records several successful attempts in one statement (the worker's hot path): each row only
 * while it is still `delivering` under the lease token that claimed it. Returns the ids written;
 * a missing id lost its lease and was left unchanged.
 */
export async function finishSucceeded(db: Db, items: readonly { id: string; leaseToken: number }[], statusCode: number, now: number): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const args: unknown[] = [statusCode, now];
  for (const i of items) args.push(i.id, i.leaseToken);
  const { numAffectedRows } = await finishSucceededRows(items.length)(db, ...args);
  if (numAffectedRows !== undefined && Number(numAffectedRows) === items.length) return new Set(items.map((i) => i.id));
  // Some lease was lost: which rows were written (exact inside the caller's transaction).
  const { rows } = await succeededUnderLease(items.length)(db, ...args.slice(2));
  return new Set(rows.map((r) => r.id));
}
