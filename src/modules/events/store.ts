/**
 * The event outbox: events are rows written in the same transaction as the change they report,
 * and so are their webhook deliveries (fan-out), so an event is never lost between being stored
 * and being scheduled.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { fanOutEvent } from '../webhooks/fan-out.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

/** Alerts (modules/alerts): raised at most once per threshold and period, or per allocation or key. */
export type AlertEventType = 'budget.threshold_crossed' | 'credits.low' | 'allocation.expiring' | 'key.expiring' | 'key.suspended' | 'webhook.failing';
export const ALERT_EVENT_TYPES: readonly AlertEventType[] = ['budget.threshold_crossed', 'credits.low', 'allocation.expiring', 'key.expiring', 'key.suspended', 'webhook.failing'];

export type EventType = 'job.completed' | 'job.failed' | 'job.cancelled' | 'media.created' | AlertEventType;
export const EVENT_TYPES: readonly EventType[] = ['job.completed', 'job.failed', 'job.cancelled', 'media.created', ...ALERT_EVENT_TYPES];

export interface StoredEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: number;
}

const insertEventQuery = prepared((db) => db.insertInto('events').values({ id: arg(0), workspace_id: arg(1), type: arg(2), data_json: arg(3), created_at_ms: arg(4) }));

/**
 * `now` must be a time taken inside the writing transaction (after its lock waits), never when
 * the work began: the feed is in commit order, and an event stamped before its transaction could
 * show a createdAt earlier than events committed before it (docs/decisions.md, "Event createdAt").
 */
export async function insertEvent(db: Db, workspaceId: string, type: EventType, data: Record<string, unknown>, now: number, id: string = newId()): Promise<StoredEvent> {
  const event: StoredEvent = { id, workspaceId, type, data, createdAt: now };
  await insertEventQuery(db, event.id, workspaceId, type, JSON.stringify(data), now);
  await fanOutEvent(db, event, now);
  return event;
}
