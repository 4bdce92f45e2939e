/**
 * The workspace event feed (decisions.md section 1, GET /v1/events) and the public event shape,
 * which is also the body of a webhook delivery.
 *
 * The cursor is a feed position sealed with the workspace (lib/cursor.ts): a forged cursor or one
 * of another workspace is 400 INVALID_CURSOR. `nextCursor` is never null: after an empty page it
 * is the position the client asked from, so polling with it later returns only newer events.
 * The cursor is a position, not a query: it may be used with or without a `types` filter.
 */
import { isLiveScope, publicWorkspaceId } from '../../lib/livemode.js';
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { toIso } from '../../lib/clock.js';
import { FEED_START, readFeed, type FeedPosition } from './feed-store.js';
import { EVENT_TYPES, type EventType, type StoredEvent } from './store.js';

const CURSOR_LIST = 'events';
const TX_PATTERN = /^\d{1,20}$/;
const ID_PATTERN = /^$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** An event as clients see it in the feed and in webhook bodies. */
export interface PublicEvent {
  id: string;
  type: EventType;
  workspaceId: string;
  livemode: boolean;
  createdAt: string;
  data: Record<string, unknown>;
}

export interface EventPage {
  items: PublicEvent[];
  nextCursor: string;
  hasMore: boolean;
}

export interface EventListInput {
  limit: number;
  cursor?: string | undefined;
  /** Comma-separated event types, as given in the query string. */
  types?: string | undefined;
}

export function presentEvent(event: StoredEvent): PublicEvent {
  return {
    id: event.id,
    type: event.type,
    workspaceId: publicWorkspaceId(event.workspaceId),
    livemode: isLiveScope(event.workspaceId),
    createdAt: toIso(event.createdAt),
    data: event.data,
  };
}

/** The types named by a `types` query value; unknown or empty names are 400 INVALID_REQUEST. */
export function parseEventTypes(value: string | undefined): EventType[] {
  if (value === undefined) return [];
  const names = value.split(',').map((s) => s.trim());
  const unknown = names.filter((n) => !(EVENT_TYPES as readonly string[]).includes(n));
  if (unknown.length > 0) {
    throw new AppError('INVALID_REQUEST', {
      message: `types must be a comma-separated list of ${EVENT_TYPES.join(', ')}.`,
      details: { unknownTypes: unknown.slice(0, 10).map((n) => n.slice(0, 64)) },
    });
  }
  return [...new Set(names as EventType[])];
}

function decodePosition(deps: Deps, workspaceId: string, cursor: string | undefined): FeedPosition {
  if (cursor === undefined) return FEED_START;
  const value = deps.cursors.decode<{ t?: unknown; a?: unknown }>(CURSOR_LIST, workspaceId, cursor);
  if (!value || typeof value.t !== 'string' || typeof value.a !== 'string' || !TX_PATTERN.test(value.t) || !ID_PATTERN.test(value.a)) {
    throw new AppError('INVALID_CURSOR');
  }
  return { tx: value.t, id: value.a };
}

function encodePosition(deps: Deps, workspaceId: string, position: FeedPosition): string {
  return deps.cursors.encode(CURSOR_LIST, workspaceId, { t: position.tx, a: position.id });
}

/** One page of the workspace's events, oldest first. */
export async function listEvents(deps: Deps, workspaceId: string, input: EventListInput): Promise<EventPage> {
  const types = parseEventTypes(input.types);
  const after = decodePosition(deps, workspaceId, input.cursor);
  const rows = await readFeed(deps.db, deps.caps, workspaceId, after, types, input.limit + 1);
  const page = rows.slice(0, input.limit);
  const last = page[page.length - 1];
  return {
    items: page.map(presentEvent),
    nextCursor: encodePosition(deps, workspaceId, last ? last.position : after),
    hasMore: rows.length > input.limit,
  };
}
