/**
 * Authentication and authorization of a request (spec Authentication 1-7). Order of checks:
 * key in query (401) → bearer format (401) → key known, not revoked, not expired (401) →
 * suspension (403 + Retry-After) → transport (403) → IP range (403) → workspace header (400) →
 * workspace included in the key and still managed by its owner (403) → scope (403).
 * Authorization failures of a valid key feed the abuse tracker.
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

export interface AuthRequest {
  authorization: string | undefined;
  /** Names of the query-string parameters present. */
  queryParams: Iterable<string>;
  workspaceHeader: string | string[] | undefined;
  ip: string;
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
  let key = deps.authCache.keys.get(hash);
  if (key === undefined) {
    const found = await store.findKeyByHash(deps.db, hash);
    // Index lookups compare in variable time; confirm the match in constant time.
    key = found && safeEqual(found.secretHash, hash) ? found.key : null;
    deps.authCache.keys.set(hash, key);
  }
  return key ?? undefined;
}

async function cachedWorkspace(deps: Deps, id: string): Promise<Workspace | undefined> {
  let ws = deps.authCache.workspaces.get(id);
  if (ws === undefined) {
    ws = (await accounts.findWorkspace(deps.db, id)) ?? null;
    deps.authCache.workspaces.set(id, ws);
  }
  return ws ?? undefined;
}

async function cachedRole(deps: Deps, organizationId: string, userId: string): Promise<MemberRole | undefined> {
  const k = `${organizationId}:${userId}`;
  let role = deps.authCache.roles.get(k);
  if (role === undefined) {
    role = (await accounts.findMemberRole(deps.db, organizationId, userId)) ?? null;
    deps.authCache.roles.set(k, role);
  }
  return role ?? undefined;
}

/** The role a user holds over a workspace, if it lets them manage it (owner or admin). */
export async function managingRole(deps: Deps, userId: string, ws: Workspace): Promise<'owner' | 'admin' | undefined> {
  if (ws.ownerUserId !== null) return ws.ownerUserId === userId ? 'owner' : undefined;
  if (ws.organizationId === null) return undefined;
  const role = await cachedRole(deps, ws.organizationId, userId);
  return role === 'owner' || role === 'admin' ? role : undefined;
}

/** The key a request presents (401 for anything wrong with the key itself). */
export async function authenticateKey(deps: Deps, req: Pick<AuthRequest, 'authorization' | 'queryParams'>): Promise<ApiKey> {
  for (const name of req.queryParams) {
    if ((QUERY_KEY_PARAMS as readonly string[]).includes(name)) {
      throw new AppError('UNAUTHENTICATED', { message: 'API keys must not be sent in the query string; use the Authorization header.' });
    }
  }
  const header = req.authorization;
  const match = header === undefined ? null : /^Bearer ([^\s]+)$/i.exec(header.trim());
  if (!match?.[1]) throw new AppError('UNAUTHENTICATED');
  const key = await resolveKey(deps, match[1]);
  if (!key || key.revokedAt !== null) throw new AppError('UNAUTHENTICATED');
  if (key.expiresAt !== null && key.expiresAt <= deps.clock.now()) throw new AppError('UNAUTHENTICATED', { message: 'The API key has expired.' });
  return key;
}

/** Everything an authenticated key must satisfy for this request: suspension, transport, IP, workspace, scope. */
export async function authorize(deps: Deps, key: ApiKey, req: Pick<AuthRequest, 'workspaceHeader' | 'scope' | 'transport' | 'ip'>): Promise<AuthContext> {
  const now = deps.clock.now();
  if (key.suspendedUntil !== null && key.suspendedUntil > now) {
    throw new AppError('KEY_SUSPENDED', {
      retryAfter: secondsUntil(now, key.suspendedUntil),
      details: { suspendedUntil: new Date(key.suspendedUntil).toISOString() },
    });
  }
  if (!key.transports.includes(req.transport)) throw new AppError('FORBIDDEN_TRANSPORT');
  if (!addressAllowed(req.ip, key.ipRanges)) throw new AppError('FORBIDDEN_IP');
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

/**
 * Counts an authorization failure of an authenticated key and suspends the key when it keeps
 * failing. Returns the suspension error to answer with instead, if it just happened.
 */
export async function recordAuthorizationFailure(deps: Deps, key: ApiKey, err: AppError): Promise<AppError | undefined> {
  if (!AUTHORIZATION_FAILURE_CODES.has(err.code)) return undefined;
  const now = deps.clock.now();
  if (!deps.abuse.recordFailure(key.id, now)) return undefined;
  const until = now + SUSPENSION_MS;
  await deps.db.transaction().execute(async (trx) => {
    await store.setKeySuspendedUntil(trx, key.id, until);
    await store.bumpAuthEpoch(trx);
  });
  deps.authCache.clear();
  deps.log.warn({ keyId: key.id }, 'api key suspended after repeated authorization failures');
  return new AppError('KEY_SUSPENDED', {
    retryAfter: secondsUntil(now, until),
    details: { suspendedUntil: new Date(until).toISOString() },
  });
}
