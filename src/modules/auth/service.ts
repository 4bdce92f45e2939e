/**
 * Authentication and authorization of a request (spec Authentication 1-7). Order of checks:
 * key in query (401) → bearer format (401) → key known, not revoked, not expired (401) →
 * IP range (403) → suspension (403 + Retry-After) → transport (403) → workspace header (400) →
 * workspace included in the key and still managed by its owner (403) → scope (403).
 *
 * Authorization failures of a valid key feed the abuse tracker, except FORBIDDEN_IP: the IP
 * ranges are there so that a leaked secret is useless off the owner's network, and a caller who
 * holds only the secret must not be able to lock the owner out by suspending the key. For the
 * same reason the IP range is checked before the suspension, so such a caller never learns
 * whether or until when the key is suspended.
 */
import type { Deps } from '../../deps.js';
import { AppError, AUTHORIZATION_FAILURE_CODES } from '../../http/errors.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { isUuid } from '../../lib/ids.js';
import { secondsUntil } from '../../lib/periods.js';
import * as accounts from '../accounts/store.js';
import type { MemberRole, Workspace } from '../accounts/types.js';
import { addressAllowed } from './ip-ranges.js';
import type { Scope, Transport } from './scopes.js';
import * as store from './store.js';
import { SUSPENSION_MS } from './suspension.js';
import type { ApiKey, AuthContext } from './types.js';

export const KEY_SECRET_PREFIX = 'wask_';
const SECRET_RE = /^wask_[A-Za-z0-9_-]{43}$/;
export const QUERY_KEY_PARAMS = ['api_key', 'apiKey', 'key', 'access_token', 'token'] as const;
const QUERY_KEY_PARAM_NAMES = new Set(QUERY_KEY_PARAMS.map((name) => name.toLowerCase()));
/** A secret anywhere in a query value (`?q=wask_…`) leaks it into logs just the same. */
const SECRET_IN_TEXT_RE = /wask_[A-Za-z0-9_-]{43}/;

export interface AuthRequest {
  authorization: string | undefined;
  /** The decoded query-string parameters, as [name, value] pairs. */
  query: Iterable<readonly [string, string]>;
  workspaceHeader: string | string[] | undefined;
  /** The client address (socket peer, or per TRUSTED_PROXIES); undefined when unknown. */
  ip: string | undefined;
  transport: Transport;
  scope: Scope | undefined;
}

export function hashSecret(secret: string): string {
  return sha256Hex(secret);
}

/** Finds the key a bearer secret belongs to (cached), or undefined. Constant-time hash check. */
export async function resolveKey(deps: Deps, secret: string): Promise<ApiKey | undefined> {
  if (!SECRET_RE.test(secret)) return undefined;
  const hash = hashSecret(secret);
  const cache = deps.authCache;
  const hit = cache.keys.get(hash);
  if (hit) return hit;
  if (cache.unknownKeys.has(hash)) return undefined;
  const generation = cache.generation;
  const found = await store.findKeyByHash(deps.db, hash);
  // Index lookups compare in variable time; confirm the match in constant time.
  const key = found && safeEqual(found.secretHash, hash) ? found.key : undefined;
  // Not cached when the cache was cleared meanwhile (a revocation may have committed after the read).
  if (cache.generation === generation) {
    if (key) cache.keys.set(hash, key);
    else cache.unknownKeys.set(hash, true);
  }
  return key;
}

async function cachedWorkspace(deps: Deps, id: string): Promise<Workspace | undefined> {
  const ws = await deps.authCache.load(deps.authCache.workspaces, id, async () => (await accounts.findWorkspace(deps.db, id)) ?? null);
  return ws ?? undefined;
}

async function cachedRole(deps: Deps, organizationId: string, userId: string): Promise<MemberRole | undefined> {
  const role = await deps.authCache.load(
    deps.authCache.roles,
    `${organizationId}:${userId}`,
    async () => (await accounts.findMemberRole(deps.db, organizationId, userId)) ?? null,
  );
  return role ?? undefined;
}

/**
 * Reads the auth epoch and clears this process's cache when another process changed keys,
 * memberships or workspaces. deps.ts calls it on a timer; tests call it directly.
 */
export async function refreshAuthEpoch(deps: Pick<Deps, 'db' | 'authCache'>): Promise<void> {
  deps.authCache.observeEpoch(await store.readAuthEpoch(deps.db));
}

/** True when the query string carries an API key: a key parameter name (any case) or a secret-shaped value. */
export function queryCarriesKey(query: Iterable<readonly [string, string]>): boolean {
  for (const [name, value] of query) {
    if (QUERY_KEY_PARAM_NAMES.has(name.toLowerCase())) return true;
    if (SECRET_IN_TEXT_RE.test(name) || SECRET_IN_TEXT_RE.test(value)) return true;
  }
  return false;
}

/** The role a user holds over a workspace, if it lets them manage it (owner or admin). */
export async function managingRole(deps: Deps, userId: string, ws: Workspace): Promise<'owner' | 'admin' | undefined> {
  if (ws.ownerUserId !== null) return ws.ownerUserId === userId ? 'owner' : undefined;
  if (ws.organizationId === null) return undefined;
  const role = await cachedRole(deps, ws.organizationId, userId);
  return role === 'owner' || role === 'admin' ? role : undefined;
}

/** The key a request presents (401 for anything wrong with the key itself). */
export async function authenticateKey(deps: Deps, req: Pick<AuthRequest, 'authorization' | 'query'>): Promise<ApiKey> {
  if (queryCarriesKey(req.query)) {
    throw new AppError('UNAUTHENTICATED', { message: 'API keys must not be sent in the query string; use the Authorization header.' });
  }
  const header = req.authorization;
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match?.[1]) throw new AppError('UNAUTHENTICATED');
  const key = await resolveKey(deps, match[1]);
  if (!key || key.revokedAt !== null) throw new AppError('UNAUTHENTICATED');
  if (key.expiresAt !== null && key.expiresAt <= deps.clock.now()) throw new AppError('UNAUTHENTICATED', { message: 'The API key has expired.' });
  return key;
}

/** Everything an authenticated key must satisfy for this request: IP, suspension, transport, workspace, scope. */
export async function authorize(deps: Deps, key: ApiKey, req: Pick<AuthRequest, 'workspaceHeader' | 'scope' | 'transport' | 'ip'>): Promise<AuthContext> {
  const now = deps.clock.now();
  if (!addressAllowed(req.ip, key.ipRanges)) throw new AppError('FORBIDDEN_IP');
  if (key.suspendedUntil !== null && key.suspendedUntil > now) {
    throw new AppError('KEY_SUSPENDED', {
      retryAfter: secondsUntil(now, key.suspendedUntil),
      details: { suspendedUntil: new Date(key.suspendedUntil).toISOString() },
    });
  }
  if (!key.transports.includes(req.transport)) throw new AppError('FORBIDDEN_TRANSPORT');
  const header = req.workspaceHeader;
  if (typeof header !== 'string' || !isUuid(header)) {
    throw new AppError('INVALID_REQUEST', { message: 'The X-Service-Workspace header must hold one workspace UUID.' });
  }
  const workspaceId = header.toLowerCase();
  if (!key.workspaceIds.includes(workspaceId)) throw new AppError('FORBIDDEN_WORKSPACE');
  const workspace = await cachedWorkspace(deps, workspaceId);
  const role = workspace && (await managingRole(deps, key.userId, workspace));
  if (!workspace || !role) throw new AppError('FORBIDDEN_WORKSPACE');
  if (req.scope && !key.scopes.includes(req.scope)) throw new AppError('FORBIDDEN_SCOPE');
  return { key, workspace, role, transport: req.transport };
}

/** Failures that count towards suspension (FORBIDDEN_IP does not: see the file header). */
export function countsTowardsSuspension(err: AppError): boolean {
  return AUTHORIZATION_FAILURE_CODES.has(err.code) && err.code !== 'FORBIDDEN_IP';
}

/**
 * Counts an authorization failure of an authenticated key and suspends the key when it keeps
 * failing. Returns the suspension error to answer with instead, if it just happened. This is the
 * only database write on a refused request.
 */
export async function recordAuthorizationFailure(deps: Deps, key: ApiKey, err: AppError): Promise<AppError | undefined> {
  if (!countsTowardsSuspension(err)) return undefined;
  const now = deps.clock.now();
  if (!deps.abuse.recordFailure(key.id, now)) return undefined;
  const until = now + SUSPENSION_MS;
  try {
    await deps.db.transaction().execute(async (trx) => {
      await store.setKeySuspendedUntil(trx, key.id, until);
      await store.bumpAuthEpoch(trx);
    });
  } catch (writeErr) {
    // The request is refused either way; a failed write must not turn a 403 into a 500.
    deps.log.error({ err: writeErr, keyId: key.id }, 'could not record the suspension of an api key');
    return undefined;
  }
  deps.authCache.clear();
  deps.log.warn({ keyId: key.id }, 'api key suspended after repeated authorization failures');
  return new AppError('KEY_SUSPENDED', {
    retryAfter: secondsUntil(now, until),
    details: { suspendedUntil: new Date(until).toISOString() },
  });
}
