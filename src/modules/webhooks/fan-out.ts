/**
 * Fan-out of an event to its webhooks, inside the transaction that stores the event (outbox):
 * one pending delivery per active webhook of the event's workspace (not revoked, enabled)
 * subscribed to its type, due at once. Committed together with the event, so nothing is lost
 * between storing and scheduling. Cost: one select on webhooks_ws_idx, one multi-row insert
 * when some webhook is subscribed.
 *
 * Workers in this process are told through `onDeliveriesScheduled` (the wake-up may come just
 * before the commit; a worker that finds nothing looks again shortly, and workers of other
 * processes find deliveries by polling).
 */
import type { Insertable, Kysely, Transaction } from 'kysely';
import type { Database, WebhookDeliveriesTable } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

const listeners = new Set<() => void>();

/** Registers a wake-up called when this process schedules deliveries; returns the unsubscribe. */
export function onDeliveriesScheduled(listener: () => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** Wakes this process's delivery workers (new or replayed deliveries). */
export function notifyDeliveryWorkers(): void {
  for (const wake of listeners) wake();
}

function subscribed(eventTypesJson: string, type: string): boolean {
  try {
    const types: unknown = JSON.parse(eventTypesJson);
    return Array.isArray(types) && types.includes(type);
  } catch {
    return false;
  }
}

export interface FannedOutEvent {
  id: string;
  workspaceId: string;
  type: string;
}

const activeHooksQuery = prepared((db) =>
  db.selectFrom('webhooks').select(['id', 'event_types_json']).where('workspace_id', '=', arg(0)).where('revoked_at_ms', 'is', null).where('enabled', '=', 1),
);

/** The pending deliveries of `event` to those of `hooks` (active webhooks of its workspace) that subscribe to its type. */
export function deliveriesFor(hooks: { id: string; event_types_json: string }[], event: FannedOutEvent, now: number): Insertable<WebhookDeliveriesTable>[] {
  return hooks
    .filter((h) => subscribed(h.event_types_json, event.type))
    .map((h) => ({
      id: newId(),
      workspace_id: event.workspaceId,
      webhook_id: h.id,
      event_id: event.id,
      status: 'pending' as const,
      attempts: 0,
      replay_count: 0,
      next_attempt_at_ms: now,
      lease_token: 0,
      created_at_ms: now,
      updated_at_ms: now,
    }));
}

/** Creates the event's deliveries; returns how many. */
export async function fanOutEvent(db: Db, event: FannedOutEvent, now: number): Promise<number> {
  const { rows: hooks } = await activeHooksQuery(db, event.workspaceId);
  const deliveries = deliveriesFor(hooks, event, now);
  if (deliveries.length === 0) return 0;
  await db.insertInto('webhook_deliveries').values(deliveries).execute();
  notifyDeliveryWorkers();
  return deliveries.length;
}
