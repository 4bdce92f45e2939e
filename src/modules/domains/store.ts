/** SQL for workspace domains (hostnames used by webhooks). */
import { publicWorkspaceId } from '../../lib/livemode.js';
import type { Kysely, Transaction } from 'kysely';
import type { Capabilities } from '../../db/connect.js';
import { lockForUpdate } from '../../db/locking.js';
import type { Database, Row } from '../../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface Domain {
  workspaceId: string;
  hostname: string;
  status: 'pending' | 'verified';
  verificationToken: string;
  verifiedMethod: string | null;
  verifiedAt: number | null;
  createdAt: number;
}

function toDomain(r: Row<'domains'>): Domain {
  return {
    workspaceId: r.workspace_id,
    hostname: r.hostname,
    status: r.status,
    verificationToken: r.verification_token,
    verifiedMethod: r.verified_method,
    verifiedAt: r.verified_at_ms,
    createdAt: r.created_at_ms,
  };
}

/** The domain of a workspace; a test twin's are its live workspace's (lib/livemode.ts). */
export async function findDomain(db: Db, workspaceId: string, hostname: string): Promise<Domain | undefined> {
  const r = await db.selectFrom('domains').selectAll().where('workspace_id', '=', publicWorkspaceId(workspaceId)).where('hostname', '=', hostname).executeTakeFirst();
  return r && toDomain(r);
}

/** The workspace's hostnames, in the order they were added (a workspace has few). */
export async function listDomains(db: Db, workspaceId: string): Promise<Domain[]> {
  const rows = await db.selectFrom('domains').selectAll().where('workspace_id', '=', workspaceId).orderBy('created_at_ms').orderBy('hostname').execute();
  return rows.map(toDomain);
}

/** The workspace in which `hostname` is verified, if any. */
export async function findVerifiedDomain(db: Db, hostname: string): Promise<Domain | undefined> {
  const r = await db.selectFrom('domains').selectAll().where('hostname', '=', hostname).where('status', '=', 'verified').executeTakeFirst();
  return r && toDomain(r);
}

/** Every workspace's row of `hostname`, locked for the transaction (PostgreSQL) in workspace order. */
export async function lockHostnameRows(db: Db, caps: Capabilities, hostname: string): Promise<Domain[]> {
  const rows = await lockForUpdate(caps, db.selectFrom('domains').selectAll().where('hostname', '=', hostname).orderBy('workspace_id')).execute();
  return rows.map(toDomain);
}

/** Inserts the row unless the workspace already has this hostname; false when it had. */
export async function insertDomain(db: Db, d: Domain): Promise<boolean> {
  const r = await db
    .insertInto('domains')
    .values({
      workspace_id: d.workspaceId,
      hostname: d.hostname,
      status: d.status,
      verification_token: d.verificationToken,
      verified_method: d.verifiedMethod,
      verified_at_ms: d.verifiedAt,
      created_at_ms: d.createdAt,
    })
    .onConflict((oc) => oc.columns(['workspace_id', 'hostname']).doNothing())
    .returning('hostname')
    .executeTakeFirst();
  return r !== undefined;
}

export async function setDomainVerified(db: Db, workspaceId: string, hostname: string, method: string, now: number): Promise<void> {
  await db
    .updateTable('domains')
    .set({ status: 'verified', verified_method: method, verified_at_ms: now })
    .where('workspace_id', '=', workspaceId)
    .where('hostname', '=', hostname)
    .execute();
}

/** Returns a verified hostname of another workspace to pending (the hostname moved). */
export async function unverifyElsewhere(db: Db, hostname: string, exceptWorkspaceId: string): Promise<void> {
  await db
    .updateTable('domains')
    .set({ status: 'pending', verified_method: null, verified_at_ms: null })
    .where('hostname', '=', hostname)
    .where('status', '=', 'verified')
    .where('workspace_id', '<>', exceptWorkspaceId)
    .execute();
}

export async function deleteDomain(db: Db, workspaceId: string, hostname: string): Promise<boolean> {
  const r = await db.deleteFrom('domains').where('workspace_id', '=', workspaceId).where('hostname', '=', hostname).executeTakeFirst();
  return Number(r.numDeletedRows) > 0;
}
