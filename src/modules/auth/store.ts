/** SQL for API keys, their workspaces and the auth cache epoch. */
import type { Kysely, Transaction } from 'kysely';
import type { Database, Row } from '../../db/schema.js';
import type { ApiKey } from './types.js';
import type { Scope, Transport } from './scopes.js';

type Db = Kysely<Database> | Transaction<Database>;

function toKey(r: Row<'api_keys'>, workspaceIds: string[]): ApiKey {
  return {
    id: r.id,
    userId: r.user_id,
    prefix: r.prefix,
    scopes: JSON.parse(r.scopes_json) as Scope[],
    operations: JSON.parse(r.operations_json) as string[],
    transports: JSON.parse(r.transports_json) as Transport[],
    ipRanges: JSON.parse(r.ip_ranges_json) as string[],
    expiresAt: r.expires_at_ms,
    budgets: {
      dailyMillicents: r.budget_daily_mc,
      weeklyMillicents: r.budget_weekly_mc,
      monthlyMillicents: r.budget_monthly_mc,
    },
    workspaceIds,
    mode: r.mode,
    createdAt: r.created_at_ms,
    revokedAt: r.revoked_at_ms,
    suspendedUntil: r.suspended_until_ms,
    previousSecretExpiresAt: r.previous_secret_expires_at_ms === null ? null : Number(r.previous_secret_expires_at_ms),
  };
}

export async function insertKey(db: Db, key: ApiKey, secretHash: string): Promise<void> {
  await db
    .insertInto('api_keys')
    .values({
      id: key.id,
      user_id: key.userId,
      secret_hash: secretHash,
      prefix: key.prefix,
      scopes_json: JSON.stringify(key.scopes),
      operations_json: JSON.stringify(key.operations),
      transports_json: JSON.stringify(key.transports),
      ip_ranges_json: JSON.stringify(key.ipRanges),
      expires_at_ms: key.expiresAt,
      budget_daily_mc: key.budgets.dailyMillicents,
      budget_weekly_mc: key.budgets.weeklyMillicents,
      budget_monthly_mc: key.budgets.monthlyMillicents,
      created_at_ms: key.createdAt,
      revoked_at_ms: null,
      suspended_until_ms: null,
      mode: key.mode,
    })
    .execute();
  await db
    .insertInto('api_key_workspaces')
    .values(key.workspaceIds.map((workspace_id) => ({ key_id: key.id, workspace_id })))
    .execute();
}

async function keyWorkspaceIds(db: Db, keyId: string): Promise<string[]> {
  const rows = await db.selectFrom('api_key_workspaces').select('workspace_id').where('key_id', '=', keyId).orderBy('workspace_id').execute();
  return rows.map((r) => r.workspace_id);
}

/**
 * Looks a key up by the SHA-256 of its secret, current or rolled (the previous secret of a roll,
 * migration 0011). `secretHash` is the stored hash that matched, for the caller's constant-time
 * confirmation; a match on the previous secret comes with `rolledSecretUntil`.
 */
export async function findKeyByHash(db: Db, secretHash: string): Promise<{ key: ApiKey; secretHash: string } | undefined> {
  const r = await db
    .selectFrom('api_keys')
    .selectAll()
    .where((eb) => eb.or([eb('secret_hash', '=', secretHash), eb('previous_secret_hash', '=', secretHash)]))
    .executeTakeFirst();
  if (!r) return undefined;
  const key = toKey(r, await keyWorkspaceIds(db, r.id));
  if (r.secret_hash === secretHash || r.previous_secret_hash === null) return { key, secretHash: r.secret_hash };
  return { key: { ...key, rolledSecretUntil: Number(r.previous_secret_expires_at_ms ?? 0) }, secretHash: r.previous_secret_hash };
}

/** The workspace ids of each key in `keyIds`, in one read. */
export async function keyWorkspaceIdsOf(db: Db, keyIds: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>(keyIds.map((id) => [id, []]));
  if (keyIds.length === 0) return out;
  const rows = await db.selectFrom('api_key_workspaces').select(['key_id', 'workspace_id']).where('key_id', 'in', keyIds).orderBy('workspace_id').execute();
  for (const r of rows) out.get(r.key_id)?.push(r.workspace_id);
  return out;
}

/** Keys newest first (before the id `beforeId`), of one user or of every key including one workspace. */
export async function pageKeys(db: Db, owner: { userId: string } | { workspaceId: string }, beforeId: string | undefined, limit: number): Promise<ApiKey[]> {
  let q = db.selectFrom('api_keys').selectAll('api_keys');
  if ('userId' in owner) q = q.where('api_keys.user_id', '=', owner.userId);
  else q = q.innerJoin('api_key_workspaces', 'api_key_workspaces.key_id', 'api_keys.id').where('api_key_workspaces.workspace_id', '=', owner.workspaceId);
  if (beforeId) q = q.where('api_keys.id', '<', beforeId);
  const rows = await q.orderBy('api_keys.id', 'desc').limit(limit).execute();
  const workspaces = await keyWorkspaceIdsOf(db, rows.map((r) => r.id));
  return rows.map((r) => toKey(r, workspaces.get(r.id) ?? []));
}

/** What an operator may change on a key (admin key update); null clears expiry or a budget. */
export interface KeyChanges {
  scopes?: Scope[];
  operations?: string[];
  transports?: Transport[];
  ipRanges?: string[];
  expiresAt?: number | null;
  budgets?: { dailyMillicents?: number | null; weeklyMillicents?: number | null; monthlyMillicents?: number | null };
}

export async function updateKey(db: Db, id: string, c: KeyChanges): Promise<void> {
  const set: Record<string, unknown> = {};
  if (c.scopes) set.scopes_json = JSON.stringify(c.scopes);
  if (c.operations) set.operations_json = JSON.stringify(c.operations);
  if (c.transports) set.transports_json = JSON.stringify(c.transports);
  if (c.ipRanges) set.ip_ranges_json = JSON.stringify(c.ipRanges);
  if (c.expiresAt !== undefined) set.expires_at_ms = c.expiresAt;
  if (c.budgets?.dailyMillicents !== undefined) set.budget_daily_mc = c.budgets.dailyMillicents;
  if (c.budgets?.weeklyMillicents !== undefined) set.budget_weekly_mc = c.budgets.weeklyMillicents;
  if (c.budgets?.monthlyMillicents !== undefined) set.budget_monthly_mc = c.budgets.monthlyMillicents;
  if (Object.keys(set).length === 0) return;
  await db.updateTable('api_keys').set(set).where('id', '=', id).execute();
}

/** A roll: the new secret's hash becomes current, the replaced one is accepted until `previousUntil`. */
export async function rollKeySecret(db: Db, id: string, next: { secretHash: string; prefix: string; previousHash: string; previousUntil: number }): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ secret_hash: next.secretHash, prefix: next.prefix, previous_secret_hash: next.previousHash, previous_secret_expires_at_ms: next.previousUntil })
    .where('id', '=', id)
    .execute();
}

/** The stored hash of a key's current secret (for a roll, which keeps it as the previous one). */
export async function findSecretHash(db: Db, id: string): Promise<string | undefined> {
  return (await db.selectFrom('api_keys').select('secret_hash').where('id', '=', id).executeTakeFirst())?.secret_hash;
}

export async function findKey(db: Db, id: string): Promise<ApiKey | undefined> {
  const r = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toKey(r, await keyWorkspaceIds(db, r.id));
}

export async function markKeyRevoked(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('api_keys').set({ revoked_at_ms: now }).where('id', '=', id).where('revoked_at_ms', 'is', null).execute();
}

export async function setKeySuspendedUntil(db: Db, id: string, until: number): Promise<void> {
  await db.updateTable('api_keys').set({ suspended_until_ms: until }).where('id', '=', id).execute();
}

/** Keys that include the workspace and are neither revoked nor expired at `now`. */
export async function countActiveKeys(db: Db, workspaceId: string, now: number): Promise<number> {
  const r = await db
    .selectFrom('api_keys')
    .innerJoin('api_key_workspaces', 'api_key_workspaces.key_id', 'api_keys.id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('api_key_workspaces.workspace_id', '=', workspaceId)
    .where('api_keys.revoked_at_ms', 'is', null)
    .where((eb) => eb.or([eb('api_keys.expires_at_ms', 'is', null), eb('api_keys.expires_at_ms', '>', now)]))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function bumpAuthEpoch(db: Db): Promise<void> {
  await db.updateTable('cache_epochs').set((eb) => ({ epoch: eb('epoch', '+', 1) })).where('name', '=', 'auth').execute();
}

export async function readAuthEpoch(db: Db): Promise<number> {
  const r = await db.selectFrom('cache_epochs').select('epoch').where('name', '=', 'auth').executeTakeFirst();
  return Number(r?.epoch ?? 0);
}
