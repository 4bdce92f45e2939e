/**
 * Users, organizations, members and workspaces (operator side). Every change that can alter what
 * a key may do (membership, plan, limits, budgets) bumps the auth epoch in its transaction.
 */
import { isLiveScope } from '../../lib/livemode.js';
import type { Kysely, Transaction } from 'kysely';
import type { Deps } from '../../deps.js';
import type { Database } from '../../db/schema.js';
import { AppError } from '../../http/errors.js';
import { newId } from '../../lib/ids.js';
import { bumpAuthEpoch } from '../auth/store.js';
import * as store from './store.js';
import type { BudgetCeilings, LimitOverrides, MemberRole, Organization, Plan, User, Workspace } from './types.js';

type Db = Kysely<Database> | Transaction<Database>;

/** True when the user owns the personal workspace or is owner/admin of its organization. */
export async function userManagesWorkspace(db: Db, userId: string, ws: Workspace): Promise<boolean> {
  if (ws.ownerUserId !== null) return ws.ownerUserId === userId;
  if (ws.organizationId === null) return false;
  const role = await store.findMemberRole(db, ws.organizationId, userId);
  return role === 'owner' || role === 'admin';
}

/** The form emails are stored and looked up in: trimmed, lower-case. */
export function normaliseEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** A display name without surrounding blanks; a blank name is a 400. */
function requireName(value: string, what: string): string {
  const name = value.trim();
  if (name === '') throw new AppError('INVALID_REQUEST', { message: `${what} must not be blank.` });
  return name;
}

export async function createUser(deps: Deps, input: { email: string; name: string }): Promise<User> {
  const user: User = { id: newId(), email: normaliseEmail(input.email), name: requireName(input.name, 'name'), createdAt: deps.clock.now() };
  // The unique email index decides, so two concurrent creations cannot both succeed.
  if (!(await store.insertUser(deps.db, user))) throw new AppError('CONFLICT', { message: 'A user with this email exists.' });
  return user;
}

export async function findUserByEmail(deps: Deps, email: string): Promise<User | undefined> {
  return store.findUserByEmail(deps.db, normaliseEmail(email));
}

export async function createOrganization(deps: Deps, input: { name: string; ownerUserId: string }): Promise<Organization> {
  const org: Organization = { id: newId(), name: requireName(input.name, 'name'), createdAt: deps.clock.now() };
  await deps.db.transaction().execute(async (trx) => {
    if (!(await store.findUser(trx, input.ownerUserId))) throw new AppError('NOT_FOUND', { message: 'No such user.' });
    await store.insertOrganization(trx, org);
    await store.upsertMember(trx, org.id, input.ownerUserId, 'owner', org.createdAt);
    await bumpAuthEpoch(trx);
  });
  deps.authCache.clear();
  return org;
}

export async function setMember(deps: Deps, organizationId: string, input: { userId: string; role: MemberRole }): Promise<{ organizationId: string; userId: string; role: MemberRole }> {
  await deps.db.transaction().execute(async (trx) => {
    if (!(await store.lockOrganization(trx, deps.caps, organizationId))) throw new AppError('NOT_FOUND', { message: 'No such organization.' });
    if (!(await store.findUser(trx, input.userId))) throw new AppError('NOT_FOUND', { message: 'No such user.' });
    const current = await store.findMemberRole(trx, organizationId, input.userId);
    if (current === 'owner' && input.role !== 'owner' && (await store.countOwners(trx, organizationId)) <= 1) {
      throw new AppError('CONFLICT', { message: 'An organization keeps at least one owner.' });
    }
    await store.upsertMember(trx, organizationId, input.userId, input.role, deps.clock.now());
    await bumpAuthEpoch(trx);
  });
  deps.authCache.clear();
  return { organizationId, userId: input.userId, role: input.role };
}

export async function removeMember(deps: Deps, organizationId: string, userId: string): Promise<void> {
  await deps.db.transaction().execute(async (trx) => {
    if (!(await store.lockOrganization(trx, deps.caps, organizationId))) throw new AppError('NOT_FOUND', { message: 'No such organization.' });
    const current = await store.findMemberRole(trx, organizationId, userId);
    if (!current) throw new AppError('NOT_FOUND', { message: 'No such member.' });
    if (current === 'owner' && (await store.countOwners(trx, organizationId)) <= 1) {
      throw new AppError('CONFLICT', { message: 'An organization keeps at least one owner.' });
    }
    await store.deleteMember(trx, organizationId, userId);
    await bumpAuthEpoch(trx);
  });
  deps.authCache.clear();
}

export interface CreateWorkspaceInput {
  name: string;
  plan: Plan;
  ownerUserId?: string;
  organizationId?: string;
  /** The credits.low threshold (modules/alerts); absent or null: off. */
  lowCreditsMillicents?: number | null;
}

export async function createWorkspace(deps: Deps, input: CreateWorkspaceInput): Promise<Workspace> {
  if ((input.ownerUserId === undefined) === (input.organizationId === undefined)) {
    throw new AppError('INVALID_REQUEST', { message: 'Give exactly one of ownerUserId (personal) or organizationId.' });
  }
  const now = deps.clock.now();
  const ws: Workspace = {
    id: newId(),
    name: requireName(input.name, 'name'),
    plan: input.plan,
    ownerUserId: input.ownerUserId ?? null,
    organizationId: input.organizationId ?? null,
    limitOverrides: {},
    budgets: { dailyMillicents: null, weeklyMillicents: null, monthlyMillicents: null },
    lowCreditsMillicents: input.lowCreditsMillicents ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await deps.db.transaction().execute(async (trx) => {
    if (input.ownerUserId && !(await store.findUser(trx, input.ownerUserId))) throw new AppError('NOT_FOUND', { message: 'No such user.' });
    if (input.organizationId && !(await store.findOrganization(trx, input.organizationId))) {
      throw new AppError('NOT_FOUND', { message: 'No such organization.' });
    }
    await store.insertWorkspace(trx, ws);
  });
  return ws;
}

export interface WorkspaceSettingsInput {
  plan?: Plan;
  /** A limit set to null returns to the plan default. */
  limits?: { [K in keyof LimitOverrides]?: number | null };
  budgets?: Partial<BudgetCeilings>;
  /** The credits.low threshold (modules/alerts); null turns the alert off. */
  lowCreditsMillicents?: number | null;
}

export async function updateWorkspaceSettings(deps: Deps, workspaceId: string, input: WorkspaceSettingsInput): Promise<Workspace> {
  const ws = await deps.db.transaction().execute(async (trx) => {
    // Locked: two concurrent changes of one workspace must not overwrite each other's overrides.
    // A test twin follows its workspace's settings (store.updateWorkspace); it is never changed by itself.
    const current = isLiveScope(workspaceId) ? await store.findWorkspaceLocked(trx, deps.caps, workspaceId) : undefined;
    if (!current) throw new AppError('NOT_FOUND', { message: 'No such workspace.' });
    const limitOverrides: LimitOverrides = { ...current.limitOverrides };
    for (const [name, value] of Object.entries(input.limits ?? {}) as [keyof LimitOverrides, number | null | undefined][]) {
      if (value === null) delete limitOverrides[name];
      else if (value !== undefined) limitOverrides[name] = value;
    }
    const budgets: BudgetCeilings = { ...current.budgets };
    for (const [period, value] of Object.entries(input.budgets ?? {}) as [keyof BudgetCeilings, number | null | undefined][]) {
      if (value !== undefined) budgets[period] = value;
    }
    const next: Workspace = {
      ...current,
      plan: input.plan ?? current.plan,
      limitOverrides,
      budgets,
      lowCreditsMillicents: input.lowCreditsMillicents === undefined ? current.lowCreditsMillicents : input.lowCreditsMillicents,
      updatedAt: deps.clock.now(),
    };
    await store.updateWorkspace(trx, next);
    await bumpAuthEpoch(trx);
    return next;
  });
  deps.authCache.clear();
  return ws;
}
