/**
 * SQL of the owners' console: sign-in links and sessions. Tokens arrive here already hashed;
 * nothing in this file ever sees a token itself.
 */
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface SignInLinkRow {
  id: string;
  userId: string;
  expiresAt: number;
  usedAt: number | null;
}

export interface SessionRow {
  id: string;
  userId: string;
  createdAt: number;
  lastSeenAt: number;
  expiresAt: number;
  revokedAt: number | null;
}

export async function insertSignInLink(db: Db, link: { id: string; tokenHash: string; userId: string; createdAt: number; expiresAt: number }): Promise<void> {
  await db
    .insertInto('console_sign_in_links')
    .values({ id: link.id, token_hash: link.tokenHash, user_id: link.userId, created_at_ms: link.createdAt, expires_at_ms: link.expiresAt, used_at_ms: null })
    .execute();
}

/**
 * Marks the unused, unexpired link with this hash used, and returns it; undefined when there is
 * no such link. One conditional UPDATE decides, so two concurrent uses cannot both succeed.
 */
export async function consumeSignInLink(db: Db, tokenHash: string, now: number): Promise<SignInLinkRow | undefined> {
  const result = await db
    .updateTable('console_sign_in_links')
    .set({ used_at_ms: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at_ms', 'is', null)
    .where('expires_at_ms', '>', now)
    .executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return undefined;
  const row = await db.selectFrom('console_sign_in_links').select(['id', 'user_id', 'expires_at_ms', 'used_at_ms']).where('token_hash', '=', tokenHash).executeTakeFirst();
  return row && { id: row.id, userId: row.user_id, expiresAt: Number(row.expires_at_ms), usedAt: row.used_at_ms === null ? null : Number(row.used_at_ms) };
}

/** Removes links that can no longer be used (expired before `before`). */
export async function deleteExpiredSignInLinks(db: Db, before: number): Promise<void> {
  await db.deleteFrom('console_sign_in_links').where('expires_at_ms', '<', before).execute();
}

export async function insertSession(db: Db, s: { id: string; tokenHash: string; userId: string; createdAt: number; expiresAt: number }): Promise<void> {
  await db
    .insertInto('console_sessions')
    .values({ id: s.id, token_hash: s.tokenHash, user_id: s.userId, created_at_ms: s.createdAt, last_seen_at_ms: s.createdAt, expires_at_ms: s.expiresAt, revoked_at_ms: null })
    .execute();
}

export async function findSessionByHash(db: Db, tokenHash: string): Promise<SessionRow | undefined> {
  const r = await db.selectFrom('console_sessions').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
  return (
    r && {
      id: r.id,
      userId: r.user_id,
      createdAt: Number(r.created_at_ms),
      lastSeenAt: Number(r.last_seen_at_ms),
      expiresAt: Number(r.expires_at_ms),
      revokedAt: r.revoked_at_ms === null ? null : Number(r.revoked_at_ms),
    }
  );
}

export async function touchSession(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('console_sessions').set({ last_seen_at_ms: now }).where('id', '=', id).where('revoked_at_ms', 'is', null).execute();
}

export async function revokeSession(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('console_sessions').set({ revoked_at_ms: now }).where('id', '=', id).where('revoked_at_ms', 'is', null).execute();
}

/** Ends every open session of a user (an operator's "sign this user out everywhere"). */
export async function revokeUserSessions(db: Db, userId: string, now: number): Promise<number> {
  const result = await db.updateTable('console_sessions').set({ revoked_at_ms: now }).where('user_id', '=', userId).where('revoked_at_ms', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Removes sessions that ended before `before`: past their lifetime, revoked, or idle since `idleBefore`. */
export async function deleteEndedSessions(db: Db, before: number, idleBefore: number): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('expires_at_ms', '<', before), eb('revoked_at_ms', '<', before), eb('last_seen_at_ms', '<', idleBefore)]))
    .execute();
}
