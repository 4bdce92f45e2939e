/**
 * SQL of alerts: the sweeps that find allocations and keys entering their expiry notice without
 * an alert yet, and the workspace's credits.low threshold. The alerts themselves are capped
 * notifications (notifications/store.ts) and events (events/store.ts).
 */
import { sql, type Kysely, type RawBuilder, type Transaction } from 'kysely';
import type { Database } from '../../db/schema.js';
import type { ExpiringAllocation } from './rules.js';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * Allocations with credits left that expire in (now, horizon] and have no allocation.expiring
 * yet, soonest first (the allocations expiry index, then one probe of the notifications cap
 * index each).
 */
export async function findAllocationsToNotice(db: Db, now: number, horizon: number, limit: number): Promise<ExpiringAllocation[]> {
  const rows = await db
    .selectFrom('credit_allocations as a')
    .select(['a.id', 'a.workspace_id', 'a.remaining_mc', 'a.expires_at_ms', 'a.provenance', 'a.created_at_ms'])
    .where('a.expires_at_ms', '>', now)
    .where('a.expires_at_ms', '<=', horizon)
    .where(sql<boolean>`a.remaining_mc > 0`)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('notifications as n').select(sql`1`.as('one')).where('n.kind', '=', 'allocation.expiring').whereRef('n.subject_id', '=', 'a.id'))),
    )
    .orderBy('a.expires_at_ms')
    .limit(limit)
    .execute();
  return rows.map((r) => ({
    id: r.id,
    workspaceId: r.workspace_id,
    remainingMillicents: Number(r.remaining_mc),
    expiresAt: Number(r.expires_at_ms),
    provenance: r.provenance,
    createdAt: Number(r.created_at_ms),
  }));
}

/** The key.expiring subject in SQL, the same text as rules.keyExpiringSubject. */
const keySubjectSql: RawBuilder<string> = sql<string>`kw.workspace_id || ':' || k.id || ':' || cast(k.expires_at_ms as text)`;

/**
 * (workspace, key) pairs of unrevoked keys that expire in (now, horizon] with no key.expiring
 * for that workspace, key and expiry yet, soonest first.
 */
export async function findKeysToNotice(db: Db, now: number, horizon: number, limit: number): Promise<{ workspaceId: string; keyId: string; expiresAt: number }[]> {
  const rows = await db
    .selectFrom('api_keys as k')
    .innerJoin('api_key_workspaces as kw', 'kw.key_id', 'k.id')
    .select(['kw.workspace_id', 'k.id', 'k.expires_at_ms'])
    .where('k.revoked_at_ms', 'is', null)
    .where('k.expires_at_ms', 'is not', null)
    .where('k.expires_at_ms', '>', now)
    .where('k.expires_at_ms', '<=', horizon)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('notifications as n').select(sql`1`.as('one')).where('n.kind', '=', 'key.expiring').where(sql<boolean>`n.subject_id = ${keySubjectSql}`))),
    )
    .orderBy('k.expires_at_ms')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ workspaceId: r.workspace_id, keyId: r.id, expiresAt: Number(r.expires_at_ms) }));
}

/** The workspace's credits.low threshold (null: off). */
export async function findLowCreditsThreshold(db: Db, workspaceId: string): Promise<number | null> {
  const r = await db.selectFrom('workspaces').select('low_credits_mc').where('id', '=', workspaceId).executeTakeFirst();
  return r?.low_credits_mc == null ? null : Number(r.low_credits_mc);
}

/** PostgreSQL batch figures: whether the workspace's credits.low of `day` exists (runs/admission-batch-store.ts). */
export const creditsLowRaisedSql = (workspaceId: string, day: string): RawBuilder<boolean> =>
  sql`exists (select 1 from notifications where kind = 'credits.low' and subject_id = ${workspaceId} and day = ${day})`;
