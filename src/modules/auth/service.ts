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
 *
 * The request path uses checkPresentedKey and checkAuthorization: they return the refusal as a
 * value instead of throwing it, and answer synchronously when key, workspace and role are in the
 * auth cache (a promise only when the database must be read). authenticateKey and authorize are
 * the throwing, always-async forms of the same checks.
 */
import type { Deps } from '../../deps.js';
import { AppError, AUTHORIZATION_FAILURE_CODES } from '../../http/errors.js';
import { safeEqual, sha256Hex } from '../../lib/crypto.js';
import { isUuid } from '../../lib/ids.js';
import { secondsUntil } from '../../lib/periods.js';
import * as accounts from '../accounts/store.js';
import type { MemberRole, Workspace } from '../accounts/types.js';
import { addressAllowed } from '../../lib/ip-ranges.js';
import type { Scope, Transport } from './scopes.js';
import * as store from './store.js';
import { SUSPENSION_MS } from './suspension.js';
import { raiseKeySuspended } from '../alerts/service.js';
import type { ApiKey, AuthContext } from './types.js';
import { testView } from '../accounts/test-twins.js';

export const KEY_SECRET_PREFIX = 'wask_';
/** The prefix of a test key's secret (decisions.md "Test mode"). */
export const TEST_KEY_SECRET_PREFIX = 'wask_test_';
const SECRET_RE = /^wask_(?:test_)?[A-Za-z0-9_-]{43}$/;
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

/** A value now, or a promise of it when something had to be read from the database first. */
export type MaybePromise<T> = T | Promise<T>;

/** Refusals shared by every request that gets them (AppError is immutable). */
const UNAUTHENTICATED = new AppError('UNAUTHENTICATED');
const KEY_IN_QUERY = new AppError('UNAUTHENTICATED', { message: 'API keys must not be sent in the query string; use the Authorization header.' });
const KEY_EXPIRED = new AppError('UNAUTHENTICATED', { message: 'The API key has expired.' });
const SECRET_ROLLED = new AppError('UNAUTHENTICATED', { message: 'This secret was replaced when the key was rolled; use the new secret.' });
const FORBIDDEN_IP = new AppError('FORBIDDEN_IP');
const FORBIDDEN_TRANSPORT = new AppError('FORBIDDEN_TRANSPORT');
const FORBIDDEN_WORKSPACE = new AppError('FORBIDDEN_WORKSPACE');
const FORBIDDEN_SCOPE = new AppError('FORBIDDEN_SCOPE');
const BAD_WORKSPACE_HEADER = new AppError('INVALID_REQUEST', { message: 'The X-Service-Workspace header must hold one workspace UUID.' });

async function loadKey(deps: Deps, hash: string): Promise<ApiKey | undefined> {
  const cache = deps.authCache;
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

/**
 * The key a bearer secret belongs to, or undefined: from the cache when it is there (no await on
 * the hot path), else a promise of the database read.
 */
export function findKeyBySecret(deps: Deps, secret: string): MaybePromise<ApiKey | undefined> {
  if (!SECRET_RE.test(secret)) return undefined;
  const hash = hashSecret(secret);
  const cache = deps.authCache;
  const hit = cache.keys.get(hash);
  if (hit) return hit;
  if (cache.unknownKeys.has(hash)) return undefined;
  return loadKey(deps, hash);
}

/** Finds the key a bearer secret belongs to (cached), or undefined. Constant-time hash check. */
export async function resolveKey(deps: Deps, secret: string): Promise<ApiKey | undefined> {
  return findKeyBySecret(deps, secret);
}

function cachedWorkspace(deps: Deps, id: string): MaybePromise<Workspace | null> {
  const hit = deps.authCache.workspaces.get(id);
  if (hit !== undefined) return hit;
  return deps.authCache.load(deps.authCache.workspaces, id, async () => (await accounts.findWorkspace(deps.db, id)) ?? null);
}

function cachedRole(deps: Deps, organizationId: string, userId: string): MaybePromise<MemberRole | null> {
  const cacheKey = `${organizationId}:${userId}`;
  const hit = deps.authCache.roles.get(cacheKey);
  if (hit !== undefined) return hit;
  return deps.authCache.load(deps.authCache.roles, cacheKey, async () => (await accounts.findMemberRole(deps.db, organizationId, userId)) ?? null);
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

function managingRoleOf(role: MemberRole | null): 'owner' | 'admin' | undefined {
  return role === 'owner' || role === 'admin' ? role : undefined;
}

/** The role a user holds over a workspace, if it lets them manage it (owner or admin); cached. */
export function managingRole(deps: Deps, userId: string, ws: Workspace): MaybePromise<'owner' | 'admin' | undefined> {
  if (ws.ownerUserId !== null) return ws.ownerUserId === userId ? 'owner' : undefined;
  if (ws.organizationId === null) return undefined;
  const role = cachedRole(deps, ws.organizationId, userId);
  return role instanceof Promise ? role.then(managingRoleOf) : managingRoleOf(role);
}

const BEARER_RE = /^Bearer ([^\s]+)$/i;

/** The secret of an `Authorization: Bearer …` header, or undefined when missing or malformed. */
export function bearerSecret(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER_RE.exec(header.trim())?.[1];
}

/** The key itself, or the 401 its presenter gets: unknown, revoked, expired, a rolled secret past its overlap. */
export function usableKey(deps: Deps, key: ApiKey | undefined): ApiKey | AppError {
  if (!key || key.revokedAt !== null) return UNAUTHENTICATED;
  const now = deps.clock.now();
  if (key.expiresAt !== null && key.expiresAt <= now) return KEY_EXPIRED;
  // The previous secret of a rolled key, past the overlap the operator chose (cached copies too).
  if (key.rolledSecretUntil !== undefined && key.rolledSecretUntil <= now) return SECRET_ROLLED;
  return key;
}

/**
 * The key a request presents, or the 401 to answer (anything wrong with the key itself). The
 * refusal is returned, not thrown: refusing is the common answer under attack and must stay cheap.
 */
export function checkPresentedKey(deps: Deps, req: Pick<AuthRequest, 'authorization' | 'query'>): MaybePromise<ApiKey | AppError> {
  if (queryCarriesKey(req.query)) return KEY_IN_QUERY;
  const secret = bearerSecret(req.authorization);
  if (secret === undefined) return UNAUTHENTICATED;
  const found = findKeyBySecret(deps, secret);
  return found instanceof Promise ? found.then((key) => usableKey(deps, key)) : usableKey(deps, found);
}

/** The key a request presents (401 for anything wrong with the key itself). */
export async function authenticateKey(deps: Deps, req: Pick<AuthRequest, 'authorization' | 'query'>): Promise<ApiKey> {
  const result = await checkPresentedKey(deps, req);
  if (result instanceof AppError) throw result;
  return result;
}

type AuthorizeRequest = Pick<AuthRequest, 'workspaceHeader' | 'scope' | 'transport' | 'ip'>;

/** Each live workspace's test view (accounts/test-twins.ts), made once per cached workspace object. */
const testViews = new WeakMap<Workspace, Workspace>();

/** The workspace a key works in: the live one, or for a test key its test twin (lib/livemode.ts). */
export function scopedWorkspace(key: ApiKey, live: Workspace): Workspace {
  if (key.mode !== 'test') return live;
  let view = testViews.get(live);
  if (!view) testViews.set(live, (view = testView(live)));
  return view;
}

function withRole(key: ApiKey, req: AuthorizeRequest, workspace: Workspace, role: 'owner' | 'admin' | undefined): AuthContext | AppError {
  if (!role) return FORBIDDEN_WORKSPACE;
  if (req.scope && !key.scopes.includes(req.scope)) return FORBIDDEN_SCOPE;
  return { key, workspace: scopedWorkspace(key, workspace), role, transport: req.transport };
}

function withWorkspace(deps: Deps, key: ApiKey, req: AuthorizeRequest, workspace: Workspace | null): MaybePromise<AuthContext | AppError> {
  if (!workspace) return FORBIDDEN_WORKSPACE;
  const role = managingRole(deps, key.userId, workspace);
  return role instanceof Promise ? role.then((r) => withRole(key, req, workspace, r)) : withRole(key, req, workspace, role);
}

/**
 * Everything an authenticated key must satisfy for this request: IP, suspension, transport,
 * workspace, scope. Returns the auth context or the refusal; synchronous when the workspace and
 * role are cached.
 */
export function checkAuthorization(deps: Deps, key: ApiKey, req: AuthorizeRequest): MaybePromise<AuthContext | AppError> {
  const refused = checkKeyAccess(deps, key, req);
  if (refused) return refused;
  const workspaceId = workspaceIdOf(req.workspaceHeader);
  if (workspaceId === undefined) return BAD_WORKSPACE_HEADER;
  if (!key.workspaceIds.includes(workspaceId)) return FORBIDDEN_WORKSPACE;
  const workspace = cachedWorkspace(deps, workspaceId);
  return workspace instanceof Promise ? workspace.then((ws) => withWorkspace(deps, key, req, ws)) : withWorkspace(deps, key, req, workspace);
}

/**
 * What a key must satisfy before any workspace is considered, in this order: the IP ranges (an
 * off-network caller learns nothing more), the suspension, the transport. Also the whole check
 * of the MCP endpoint itself, whose tool calls name their workspace each.
 */
export function checkKeyAccess(deps: Deps, key: ApiKey, req: Pick<AuthorizeRequest, 'ip' | 'transport'>): AppError | undefined {
  if (key.ipRanges.length > 0 && !addressAllowed(req.ip, key.ipRanges)) return FORBIDDEN_IP;
  if (key.suspendedUntil !== null) {
    const now = deps.clock.now();
    if (key.suspendedUntil > now) {
      return new AppError('KEY_SUSPENDED', {
        retryAfter: secondsUntil(now, key.suspendedUntil),
        details: { suspendedUntil: new Date(key.suspendedUntil).toISOString() },
      });
    }
  }
  if (!key.transports.includes(req.transport)) return FORBIDDEN_TRANSPORT;
  return undefined;
}

/** The workspace id of a well-formed X-Service-Workspace header (lower case), else undefined. */
function workspaceIdOf(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && isUuid(header) ? header.toLowerCase() : undefined;
}

/** Everything an authenticated key must satisfy for this request: IP, suspension, transport, workspace, scope. */
export async function authorize(deps: Deps, key: ApiKey, req: AuthorizeRequest): Promise<AuthContext> {
  const result = await checkAuthorization(deps, key, req);
  if (result instanceof AppError) throw result;
  return result;
}

/**
 * The workspace a header names when the key may use it (included in the key, still managed by
 * the key's owner), else undefined. For refusals of an authenticated key that still carry the
 * workspace's RateLimit headers.
 */
export async function usableWorkspace(deps: Deps, key: ApiKey, header: string | string[] | undefined): Promise<Workspace | undefined> {
  const workspaceId = workspaceIdOf(header);
  if (workspaceId === undefined || !key.workspaceIds.includes(workspaceId)) return undefined;
  const workspace = await cachedWorkspace(deps, workspaceId);
  return workspace && (await managingRole(deps, key.userId, workspace)) ? scopedWorkspace(key, workspace) : undefined;
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
      // key.suspended in each of its workspaces (modules/alerts), at most once a day each.
      await raiseKeySuspended(trx, key, until, now);
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

/**
 * 403 FORBIDDEN_OPERATION for an operation the key may not run, counted like the hook's
 * authorization failures: a key that keeps asking for operations it was not given is suspended
 * (the answer is then 403 KEY_SUSPENDED).
 */
export async function forbiddenOperation(deps: Deps, key: ApiKey, operationId: string): Promise<AppError> {
  const refusal = new AppError('FORBIDDEN_OPERATION', { details: { operationId } });
  return (await recordAuthorizationFailure(deps, key, refusal)) ?? refusal;
}
