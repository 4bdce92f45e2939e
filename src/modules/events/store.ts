/**
 * The event outbox: events are rows written in the same transaction as the change they report,
 * and so are their webhook deliveries (fan-out), so an event is never lost between being stored
 * and being scheduled.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import { newId } from '../../lib/ids.js';
import { fanOutEvent } from '../webhooks/fan-out.js';

type Db = Kysely<Database> | Transaction<Database>;

export type EventType = 'job.completed' | 'job.failed' | 'job.cancelled' | 'media.created';
export const EVENT_TYPES: readonly EventType[] = ['job.completed', 'job.failed', 'job.cancelled', 'media.created'];

export interface StoredEvent {
  id: string;
  workspaceId: string;
  type: EventType;
  data: Record<string, unknown>;
  createdAt: number;
}

export async function insertEvent(db: Db, workspaceId: string, type: EventType, data: Record<string, unknown>, now: number): Promise<StoredEvent> {
  const event: StoredEvent = { id: newId(), workspaceId, type, data, createdAt: now };
  await db.insertInto('events').values({ id: event.id, workspace_id: workspaceId, type, data_json: JSON.stringify(data), created_at_ms: now }).execute();
  await fanOutEvent(db, event, now);
  return event;
}
