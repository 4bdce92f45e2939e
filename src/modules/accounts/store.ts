/** SQL for users, organizations, memberships and workspaces. */
import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import { lockForUpdate } from '../../db/locking.js';
import type { Database, Row } from '../../db/schema.js';
import type { LimitOverrides, MemberRole, Organization, Plan, User, Workspace } from './types.js';
import { arg, prepared } from '../../db/prepared.js';

type Db = Kysely<Database> | Transaction<Database>;

function toUser(r: Row<'users'>): User {
  return { id: r.id, email: r.email, name: r.name, createdAt: r.created_at_ms };
}

function toWorkspace(r: Row<'workspaces'>): Workspace {
  return {
    id: r.id,
    name: r.name,
    plan: r.plan as Plan,
    ownerUserId: r.owner_user_id,
    organizationId: r.organization_id,
    limitOverrides: JSON.parse(r.limits_json) as LimitOverrides,
    budgets: {
      dailyMillicents: r.budget_daily_mc,
      weeklyMillicents: r.budget_weekly_mc,
      monthlyMillicents: r.budget_monthly_mc,
    },
    lowCreditsMillicents: r.low_credits_mc === null ? null : Number(r.low_credits_mc),
    createdAt: r.created_at_ms,
    updatedAt: r.updated_at_ms,
  };
}

/** Inserts the user unless the email is taken (also by a concurrent insert); false when taken. */
export async function insertUser(db: Db, user: User): Promise<boolean> {
  const r = await db
    .insertInto('users')
    .values({ id: user.id, email: user.email, name: user.name, created_at_ms: user.createdAt })
    .onConflict((oc) => oc.column('email').doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

export async function findUser(db: Db, id: string): Promise<User | undefined> {
  const r = await db.selectFrom('users').selectAll().where('id', '=', id).executeTakeFirst();
  return r && toUser(r);
}

export async function findUserByEmail(db: Db, email: string): Promise<User | undefined> {
  const r = await db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
  return r && toUser(r);
}

export async function insertOrganization(db: Db, org: Organization): Promise<void> {
  await db.insertInto('organizations').values({ id: org.id, name: org.name, created_at_ms: org.createdAt }).execute();
}

export async function findOrganization(db: Db, id: string): Promise<Organization | undefined> {
  const r = await db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
  return r && { id: r.id, name: r.name, createdAt: r.created_at_ms };
}

/**
 * Locks the organization row for the rest of the transaction (PostgreSQL), so membership changes
 * of one organization run one at a time and the "at least one owner" check cannot be raced.
 */
export async function lockOrganization(db: Db, caps: Capabilities, id: string): Promise<Organization | undefined> {
  const r = await lockForUpdate(caps, db.selectFrom('organizations').selectAll().where('id', '=', id)).executeTakeFirst();
  return r && { id: r.id, name: r.name, createdAt: r.created_at_ms };
}

export async function upsertMember(db: Db, organizationId: string, userId: string, role: MemberRole, now: number): Promise<void> {
  await db
    .insertInto('organization_members')
    .values({ organization_id: organizationId, user_id: userId, role, created_at_ms: now })
    .onConflict((oc) => oc.columns(['organization_id', 'user_id']).doUpdateSet({ role }))
    .execute();
}

export async function deleteMember(db: Db, organizationId: string, userId: string): Promise<boolean> {
  const r = await db
    .deleteFrom('organization_members')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}

export async function findMemberRole(db: Db, organizationId: string, userId: string): Promise<MemberRole | undefined> {
  const r = await db
    .selectFrom('organization_members')
    .select('role')
    .where('organization_id', '=', organizationId)
    .where('user_id', '=', userId)
    .executeTakeFirst();
  return r?.role;
}

export async function countOwners(db: Db, organizationId: string): Promise<number> {
  const r = await db
    .selectFrom('organization_members')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('organization_id', '=', organizationId)
    .where('role', '=', 'owner')
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export async function insertWorkspace(db: Db, ws: Workspace): Promise<void> {
  await db
    .insertInto('workspaces')
    .values({
      id: ws.id,
      name: ws.name,
      plan: ws.plan,
      owner_user_id: ws.ownerUserId,
      organization_id: ws.organizationId,
      limits_json: JSON.stringify(ws.limitOverrides),
      budget_daily_mc: ws.budgets.dailyMillicents,
      budget_weekly_mc: ws.budgets.weeklyMillicents,
      budget_monthly_mc: ws.budgets.monthlyMillicents,
      low_credits_mc: ws.lowCreditsMillicents,
      created_at_ms: ws.createdAt,
      updated_at_ms: ws.updatedAt,
    })
    .execute();
}

// Test twins (lib/livemode.ts) are nobody's workspace to name: only the worker reads them (findWorkspaceLocked).
const findWorkspaceQuery = prepared((db) => db.selectFrom('workspaces').selectAll().where('id', '=', arg(0)).where('live_workspace_id', 'is', null));

/** A live workspace by id (a test twin's id finds nothing). */
export async function findWorkspace(db: Db, id: string): Promise<Workspace | undefined> {
  const r = (await findWorkspaceQuery(db, id)).rows[0];
  return r && toWorkspace(r);
}

/** Reads the workspace and locks its row for the rest of the transaction (PostgreSQL): read-modify-write. */
/**
 * The PostgreSQL row lock of a workspace as a compiled statement, for batches that send it in a
 * pipeline with the statements that follow it (db/batch-transaction.ts); the same lock as
 * db/locking.ts takes.
 */
export function lockWorkspaceQuery(db: Kysely<Database>, id: string): CompiledQuery {
  return db.selectFrom('workspaces').select('id').where('id', '=', id).forNoKeyUpdate().compile();
}

/** The workspace, read with its row locked (db/locking.ts) for the rest of the transaction. */
export async function findWorkspaceLocked(db: Db, caps: Capabilities, id: string): Promise<Workspace | undefined> {
  const r = await lockForUpdate(caps, db.selectFrom('workspaces').selectAll().where('id', '=', id)).executeTakeFirst();
  return r && toWorkspace(r);
}

export async function findWorkspaces(db: Db, ids: readonly string[]): Promise<Workspace[]> {
  if (ids.length === 0) return [];
  const rows = await db.selectFrom('workspaces').selectAll().where('id', 'in', ids).where('live_workspace_id', 'is', null).orderBy('id').execute();
  return rows.map(toWorkspace);
}

/**
 * Inserts the test twin of a live workspace (lib/livemode.ts) unless it exists: a copy of the
 * live row (plan, limits, budgets, owner) that names it. True when this call inserted it.
 */
export async function insertTestTwin(db: Db, live: Workspace, twinId: string, now: number): Promise<boolean> {
  const r = await db
    .insertInto('workspaces')
    .values({
      id: twinId,
      name: live.name,
      plan: live.plan,
      owner_user_id: live.ownerUserId,
      organization_id: live.organizationId,
      limits_json: JSON.stringify(live.limitOverrides),
      budget_daily_mc: live.budgets.dailyMillicents,
      budget_weekly_mc: live.budgets.weeklyMillicents,
      budget_monthly_mc: live.budgets.monthlyMillicents,
      low_credits_mc: live.lowCreditsMillicents,
      created_at_ms: now,
      updated_at_ms: now,
      live_workspace_id: live.id,
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returning('id')
    .executeTakeFirst();
  return r !== undefined;
}

/** Changes a workspace's settings, and its test twin's with it (the twin is always a copy). */
export async function updateWorkspace(db: Db, ws: Workspace): Promise<void> {
  await db
    .updateTable('workspaces')
    .set({
      name: ws.name,
      plan: ws.plan,
      limits_json: JSON.stringify(ws.limitOverrides),
      budget_daily_mc: ws.budgets.dailyMillicents,
      budget_weekly_mc: ws.budgets.weeklyMillicents,
      budget_monthly_mc: ws.budgets.monthlyMillicents,
      low_credits_mc: ws.lowCreditsMillicents,
      updated_at_ms: ws.updatedAt,
    })
    .where((eb) => eb.or([eb('id', '=', ws.id), eb('live_workspace_id', '=', ws.id)]))
    .execute();
}

// ---- operator reads (admin API): newest first, keyset pages by id ------------------------------

export async function pageUsers(db: Db, beforeId: string | undefined, limit: number): Promise<User[]> {
  let q = db.selectFrom('users').selectAll();
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toUser);
}

export async function pageOrganizations(db: Db, beforeId: string | undefined, limit: number): Promise<Organization[]> {
  let q = db.selectFrom('organizations').selectAll();
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map((r) => ({ id: r.id, name: r.name, createdAt: Number(r.created_at_ms) }));
}

export async function pageWorkspaces(db: Db, beforeId: string | undefined, limit: number): Promise<Workspace[]> {
  let q = db.selectFrom('workspaces').selectAll().where('live_workspace_id', 'is', null);
  if (beforeId) q = q.where('id', '<', beforeId);
  return (await q.orderBy('id', 'desc').limit(limit).execute()).map(toWorkspace);
}

export interface Member {
  organizationId: string;
  userId: string;
  email: string;
  name: string;
  role: MemberRole;
  createdAt: number;
}

/** The members of an organization with who they are, owners first, then by user id. */
export async function listMembers(db: Db, organizationId: string): Promise<Member[]> {
  const rows = await db
    .selectFrom('organization_members')
    .innerJoin('users', 'users.id', 'organization_members.user_id')
    .select(['organization_members.organization_id', 'organization_members.user_id', 'organization_members.role', 'organization_members.created_at_ms', 'users.email', 'users.name'])
    .where('organization_members.organization_id', '=', organizationId)
    .orderBy('organization_members.user_id')
    .execute();
  const rank = { owner: 0, admin: 1, member: 2 } as const;
  return rows
    .map((r) => ({ organizationId: r.organization_id, userId: r.user_id, email: r.email, name: r.name, role: r.role, createdAt: Number(r.created_at_ms) }))
    .sort((a, b) => rank[a.role] - rank[b.role]);
}

/** The organizations a user belongs to, with the role. */
export async function listMemberships(db: Db, userId: string): Promise<{ organizationId: string; name: string; role: MemberRole }[]> {
  const rows = await db
    .selectFrom('organization_members')
    .innerJoin('organizations', 'organizations.id', 'organization_members.organization_id')
    .select(['organization_members.organization_id', 'organizations.name', 'organization_members.role'])
    .where('organization_members.user_id', '=', userId)
    .orderBy('organization_members.organization_id')
    .execute();
  return rows.map((r) => ({ organizationId: r.organization_id, name: r.name, role: r.role }));
}

/** The ids of a user's personal workspaces, or of an organization's workspaces. */
export async function workspaceIdsOf(db: Db, owner: { userId: string } | { organizationId: string }): Promise<string[]> {
  let q = db.selectFrom('workspaces').select('id').where('live_workspace_id', 'is', null);
  q = 'userId' in owner ? q.where('owner_user_id', '=', owner.userId) : q.where('organization_id', '=', owner.organizationId);
  return (await q.orderBy('id').execute()).map((r) => r.id);
}
