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
    createdAt: r.created_at_ms,
    revokedAt: r.revoked_at_ms,
    suspendedUntil: r.suspended_until_ms,
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

/** Looks a key up by the SHA-256 of its secret. */
export async function findKeyByHash(db: Db, secretHash: string): Promise<{ key: ApiKey; secretHash: string } | undefined> {
  const r = await db.selectFrom('api_keys').selectAll().where('secret_hash', '=', secretHash).executeTakeFirst();
  if (!r) return undefined;
  return { key: toKey(r, await keyWorkspaceIds(db, r.id)), secretHash: r.secret_hash };
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
