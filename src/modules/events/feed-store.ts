/**
 * Reads of the event feed (GET /v1/events): a keyset walk that never passes an event that could
 * still appear behind it.
 *
 * Why not simply `id > cursor`: ids (UUIDv7) are taken when the event is inserted, but become
 * visible only when the writing transaction commits. With several writers (PostgreSQL) a
 * transaction holding a smaller id can commit after one holding a larger id; a feed that had
 * already moved past the larger id would skip the smaller one forever.
 *
 * - PostgreSQL (and PGlite): every event row records its writing transaction (`tx_id`, xid8,
 *   set by the database). The feed walks by (tx_id, id) and returns only events of transactions
 *   older than the reader's snapshot xmin: every such transaction has finished, and no future
 *   transaction can get a smaller xid, so nothing can ever appear behind the position. A writing
 *   transaction that is still open only delays the feed (the same snapshot rule PgQ uses).
 *   Transaction ids are counted across the whole server, so the plain snapshot xmin is also held
 *   back by transactions of other databases on it, which can never write these events (another
 *   application's long batch, an operator's open psql transaction): the horizon leaves out the
 *   running transactions that pg_stat_activity shows in another database (its database and
 *   transaction id columns are readable by every role). A running transaction it cannot place
 *   (a prepared one, one that ended meanwhile) still holds the feed back, as before.
 * - PGlite: one connection in this process, so the snapshot xmin is the horizon.
 * - SQLite: one connection runs one transaction at a time and ids are taken inside it, so id
 *   order is commit order and `id > cursor` is already exact.
 */
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import type { Database } from '../../db/schema.js';
import type { EventType, StoredEvent } from './store.js';

type Db = Kysely<Database> | Transaction<Database>;

/** A position in a workspace's feed: after transaction `tx` (decimal xid8; '0' on SQLite) and event id `id`. */
export interface FeedPosition {
  tx: string;
  id: string;
}

export const FEED_START: FeedPosition = { tx: '0', id: '' };

export interface FeedEvent extends StoredEvent {
  position: FeedPosition;
}

interface FeedRow {
  id: string;
  workspace_id: string;
  type: string;
  data_json: string;
  created_at_ms: number | string;
  tx: string | null;
}

function toFeedEvent(r: FeedRow): FeedEvent {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    type: r.type as EventType,
    data: JSON.parse(r.data_json) as Record<string, unknown>,
    createdAt: Number(r.created_at_ms),
    position: { tx: r.tx ?? '0', id: r.id },
  };
}

const SNAPSHOT_XMIN = sql<string>`pg_snapshot_xmin(pg_current_snapshot())`;

/**
 * The oldest transaction of this database still running at the statement's snapshot (its xmax
 * when none is): every older transaction that could write here has ended and is visible, and
 * every later one gets a larger id. The snapshot's running ids minus those pg_stat_activity
 * places in another database; an uncorrelated subquery, evaluated once per statement.
 */
const DATABASE_HORIZON = sql<string>`(select coalesce(
  (select min(x) from pg_snapshot_xip(pg_current_snapshot()) as x
    where xid(x) not in (select a.backend_xid from pg_stat_get_activity(null) as a
      where a.backend_xid is not null and a.datid <> (select oid from pg_database where datname = current_database()))),
  pg_snapshot_xmax(pg_current_snapshot())))`;

/**
 * Up to `limit` events of the workspace after `after`, in feed order, optionally only of `types`
 * (an empty list is no filter).
 */
export async function readFeed(
  db: Db,
  caps: Capabilities,
  workspaceId: string,
  after: FeedPosition,
  types: readonly EventType[],
  limit: number,
): Promise<FeedEvent[]> {
  const base = db.selectFrom('events').select(['id', 'workspace_id', 'type', 'data_json', 'created_at_ms']).where('workspace_id', '=', workspaceId);
  const filtered = types.length > 0 ? base.where('type', 'in', [...types]) : base;
  if (caps.commitOrderFeed) {
    const rows = await filtered
      .select(sql<string>`tx_id::text`.as('tx'))
      .where(sql<boolean>`(tx_id, id) > (${after.tx}::xid8, ${after.id})`)
      .where(sql<boolean>`tx_id < ${caps.singleWriter ? SNAPSHOT_XMIN : DATABASE_HORIZON}`)
      .orderBy(sql`tx_id`)
      .orderBy('id')
      .limit(limit)
      .execute();
    return rows.map((r) => toFeedEvent(r as FeedRow));
  }
  const rows = await filtered.where('id', '>', after.id).orderBy('id').limit(limit).execute();
  return rows.map((r) => toFeedEvent({ ...r, tx: null }));
}
