/**
 * Console sign-in (decisions.md section 6, issue 35): one-time links the operator issues and the
 * browser sessions they start.
 *
 * Invariants: a link works once and for 15 minutes; a session ends after IDLE_TIMEOUT_MS without a
 * request, at SESSION_LIFETIME_MS after sign-in whatever its activity, or when revoked (sign-out).
 * Link and session tokens are 256 random bits returned once and stored only as their SHA-256, so
 * a copy of the database signs nobody in; a presented token is found by its hash through a
 * unique index (the lookup does not compare secrets byte by byte). The CSRF token is derived from
 * the session token (a hash with its own label): it can be shown to the page's script while the
 * session token stays in an HttpOnly cookie, and it cannot be turned back into the session token.
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { randomToken, safeEqual, sha256Hex } from '../lib/crypto.js';
import { newId } from '../lib/ids.js';
import * as accounts from '../modules/accounts/store.js';
import type { User } from '../modules/accounts/types.js';
import * as store from './store.js';

export const SIGN_IN_LINK_TTL_MS = 15 * 60 * 1000;
export const IDLE_TIMEOUT_MS = 60 * 60 * 1000;
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;
/** A session's last-seen time is written at most this often (not on every request). */
const TOUCH_INTERVAL_MS = 60 * 1000;

const DAY_MS = 24 * 3600 * 1000;
const hashToken = (token: string) => sha256Hex(token);

/** The CSRF token of a session: derived from its token, so nothing more is stored. */
export function csrfTokenOf(sessionToken: string): string {
  return sha256Hex(`console-csrf\0${sessionToken}`);
}

/** Constant-time check of a presented CSRF token against the session's. */
export function csrfTokenMatches(sessionToken: string, presented: unknown): boolean {
  return typeof presented === 'string' && safeEqual(presented, csrfTokenOf(sessionToken));
}

/** Where a link sends the browser: the token in the fragment, which browsers never send to a server. */
export function signInUrl(publicBaseUrl: string, token: string): string {
  return `${publicBaseUrl}/console/sign-in#token=${token}`;
}

/** Issues a one-time sign-in link for an existing user. */
export async function issueSignInLink(deps: Deps, userId: string): Promise<{ url: string; expiresAt: number }> {
  const user = await accounts.findUser(deps.db, userId);
  if (!user) throw new AppError('NOT_FOUND', { message: 'No such user.' });
  const now = deps.clock.now();
  const token = randomToken(32);
  const expiresAt = now + SIGN_IN_LINK_TTL_MS;
  await deps.db.transaction().execute(async (trx) => {
    // Links that expired a day ago are of no use to anybody: removed as new ones are issued.
    await store.deleteExpiredSignInLinks(trx, now - DAY_MS);
    await store.insertSignInLink(trx, { id: newId(), tokenHash: hashToken(token), userId, createdAt: now, expiresAt });
  });
  return { url: signInUrl(deps.config.publicBaseUrl, token), expiresAt };
}

const BAD_LINK = 'This sign-in link is unknown, already used or expired; ask the operator for a new one.';

/** Consumes a link and starts a session; the returned token goes into the cookie only. */
export async function signIn(deps: Deps, linkToken: string): Promise<{ user: User; sessionToken: string; csrfToken: string; expiresAt: number }> {
  const now = deps.clock.now();
  const sessionToken = randomToken(32);
  const expiresAt = now + SESSION_LIFETIME_MS;
  const user = await deps.db.transaction().execute(async (trx) => {
    // Sessions that ended more than a day ago are of no use to anybody: removed as new ones start.
    await store.deleteEndedSessions(trx, now - DAY_MS, now - IDLE_TIMEOUT_MS - DAY_MS);
    const link = await store.consumeSignInLink(trx, hashToken(linkToken), now);
    if (!link) throw new AppError('UNAUTHENTICATED', { message: BAD_LINK });
    const found = await accounts.findUser(trx, link.userId);
    if (!found) throw new AppError('UNAUTHENTICATED', { message: BAD_LINK });
    await store.insertSession(trx, { id: newId(), tokenHash: hashToken(sessionToken), userId: found.id, createdAt: now, expiresAt });
    return found;
  });
  return { user, sessionToken, csrfToken: csrfTokenOf(sessionToken), expiresAt };
}

export interface ConsoleSession {
  id: string;
  user: User;
  /** The token the cookie carried (kept for the CSRF check of this request only). */
  token: string;
}

/** The live session a cookie names, or undefined (unknown, revoked, idle too long, past its lifetime). */
export async function findLiveSession(deps: Deps, token: string): Promise<ConsoleSession | undefined> {
  const now = deps.clock.now();
  const row = await store.findSessionByHash(deps.db, hashToken(token));
  if (!row || row.revokedAt !== null || now >= row.expiresAt || now - row.lastSeenAt >= IDLE_TIMEOUT_MS) return undefined;
  const user = await accounts.findUser(deps.db, row.userId);
  if (!user) return undefined;
  if (now - row.lastSeenAt >= TOUCH_INTERVAL_MS) await store.touchSession(deps.db, row.id, now);
  return { id: row.id, user, token };
}

export async function signOut(deps: Deps, sessionId: string): Promise<void> {
  await store.revokeSession(deps.db, sessionId, deps.clock.now());
}
