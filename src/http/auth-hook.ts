/**
 * The request pipeline before any handler: for routes whose RouteMeta says `auth: 'key'` it
 * authenticates the key, authorizes workspace and scope, then charges the route's usage points
 * (or answers 429) and sets the RateLimit headers. Admin routes compare the admin token in
 * constant time. A refused request (401, 403, 429) writes nothing to the database, except the
 * rare suspension of an abusive key; test/http/auth.test.ts compares every table before and after.
 *
 * Speed (npm run bench measures this path against a bare Fastify route): the hook is attached
 * per route when the route is declared (routes without auth run no hook at all), it is a
 * callback hook that stays synchronous while everything it needs is cached (key, workspace,
 * role, usage counters), and refusals are answered directly with a prebuilt envelope instead of
 * being thrown through Fastify's error path. The answers are byte-for-byte those of the error
 * handler (test/http/errors.test.ts).
 *
 * RateLimit headers: every response of an authenticated key that may use the workspace it names
 * carries them, refusals included (403 FORBIDDEN_SCOPE, KEY_SUSPENDED, 429, handler errors).
 * Refusals that come before such a workspace is established (401, 400 for the header, 403
 * FORBIDDEN_WORKSPACE, and 403 FORBIDDEN_IP, which tells an off-network caller nothing) have no
 * window to report. Routes whose points the service charges (runs, retries) get the headers
 * refreshed when the response is sent, so RateLimit-Remaining includes that charge.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onRequestHookHandler, onSendHookHandler, RouteOptions } from 'fastify';
import type { Deps } from '../deps.js';
import { safeEqual, sha256Hex } from '../lib/crypto.js';
import { secondsUntil } from '../lib/periods.js';
import { checkAuthorization, checkPresentedKey, recordAuthorizationFailure, usableWorkspace } from '../modules/auth/service.js';
import type { ApiKey, AuthContext } from '../modules/auth/types.js';
import type { ChargeResult, WindowView } from '../modules/usage/meter.js';
import { resolveLimits } from '../modules/usage/plans.js';
import { rateLimitRefusal } from '../modules/usage/service.js';
import { isInternalMcpRequest, MCP_INTERNAL_HEADER } from '../mcp/internal.js';
import { sendRefusal } from './refusal.js';
import { AppError } from './errors.js';
import type { RouteMeta } from './route-meta.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth?: AuthContext;
    /** The RouteMeta of the matched route, set by the auth hook (cheaper than routeOptions). */
    routeMeta?: RouteMeta;
    /**
     * Told the job id of the synchronous run this request starts, once it is admitted: set by the
     * transport that replayed the request to follow the run (MCP progress; a getter decorated by
     * mcp/internal.ts), undefined for every other request. Routes read it without knowing the
     * transport.
     */
    readonly onSynchronousJob: ((jobId: string) => void) | undefined;
  }
}

/** The auth context of a key-authenticated route (set by the hook before the handler). */
export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('UNAUTHENTICATED');
  return request.auth;
}

/** The decoded query-string pairs of the raw URL (independent of the route's query schema). */
export function queryPairs(url: string): [string, string][] {
  const q = url.indexOf('?');
  if (q < 0) return [];
  return [...new URLSearchParams(url.slice(q + 1)).entries()];
}

const NO_QUERY: [string, string][] = [];

/** Codes whose refusal may still carry the workspace's RateLimit headers (see the file header). */
const REFUSALS_WITH_WINDOW = new Set(['KEY_SUSPENDED', 'FORBIDDEN_TRANSPORT', 'FORBIDDEN_SCOPE']);

function setRateLimitHeaders(reply: FastifyReply, now: number, minute: WindowView): void {
  const remaining = minute.limit - minute.used;
  reply.header('RateLimit-Limit', String(minute.limit));
  reply.header('RateLimit-Remaining', String(remaining > 0 ? remaining : 0));
  reply.header('RateLimit-Reset', String(secondsUntil(now, minute.resetsAt)));
}

function toArray<T>(value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value];
}

const UNAUTHENTICATED = new AppError('UNAUTHENTICATED');

/** Continues the request, or answers the refusal. */
function continueOrRefuse(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction, refusal: AppError | undefined): void {
  if (refusal) sendRefusal(request, reply, refusal);
  else done();
}

/** Admin routes: the Bearer token is the operator's ADMIN_TOKEN (compared by hash, in constant time). */
function adminHook(adminTokenHash: string | undefined, meta: RouteMeta): onRequestHookHandler {
  return function authenticateAdmin(request, reply, done) {
    request.routeMeta = meta;
    const m = /^Bearer (.+)$/i.exec(request.headers.authorization ?? '');
    if (!adminTokenHash || !m?.[1] || !safeEqual(sha256Hex(m[1]), adminTokenHash)) return void sendRefusal(request, reply, UNAUTHENTICATED);
    done();
  };
}

/** What a key route's checks need: the service, the route's metadata and its endpoint name. */
interface KeyRoute {
  deps: Deps;
  meta: RouteMeta;
  /** `METHOD /path`, the operation of the usage history for this route's points. */
  endpoint: string;
}

type Outcome = AppError | undefined | Promise<AppError | undefined>;

/**
 * A route whose service charges the points (the weight depends on the operation) is refused
 * here when a window has no point left at all: every such request costs at least one point,
 * so it could not be served, and its checks (input, media, Idempotency-Key) are not run.
 */
function afterPeek(deps: Deps, reply: FastifyReply, view: { minute: WindowView; month: WindowView }): AppError | undefined {
  const now = deps.clock.now();
  setRateLimitHeaders(reply, now, view.minute);
  if (view.minute.used >= view.minute.limit) return rateLimitRefusal(now, 'POINTS_MINUTE', view.minute.resetsAt);
  if (view.month.used >= view.month.limit) return rateLimitRefusal(now, 'POINTS_MONTH', view.month.resetsAt);
  return undefined;
}

function afterCharge(deps: Deps, reply: FastifyReply, result: ChargeResult): AppError | undefined {
  const now = deps.clock.now();
  setRateLimitHeaders(reply, now, result.minute);
  return result.ok ? undefined : rateLimitRefusal(now, result.limit, result.resetsAt);
}

/** Charges the route's points (or peeks for 'service' routes) and sets the RateLimit headers. */
function admit(route: KeyRoute, request: FastifyRequest, reply: FastifyReply, auth: AuthContext): Outcome {
  const { deps, meta } = route;
  request.auth = auth;
  const workspace = auth.workspace;
  const limits = resolveLimits(workspace);
  if (typeof meta.points === 'number') {
    // Attributed to the key and the endpoint in the usage history (usage/history.ts).
    const by = { keyId: auth.key.id, operation: route.endpoint };
    const charged = deps.usage.chargeNow(workspace.id, meta.points, limits, by);
    if (charged) return afterCharge(deps, reply, charged);
    return deps.usage.charge(workspace.id, meta.points, limits, by).then((result) => afterCharge(deps, reply, result));
  }
  const peeked = deps.usage.peekNow(workspace.id, limits);
  if (peeked) return afterPeek(deps, reply, peeked);
  return deps.usage.peek(workspace.id, limits).then((view) => afterPeek(deps, reply, view));
}

/** A refused authorization: counted towards suspension; carries the window when it may. */
async function refuseAuthorization(deps: Deps, request: FastifyRequest, reply: FastifyReply, key: ApiKey, refusal: AppError): Promise<AppError> {
  const answer = (await recordAuthorizationFailure(deps, key, refusal)) ?? refusal;
  if (REFUSALS_WITH_WINDOW.has(answer.code)) {
    const workspace = await usableWorkspace(deps, key, request.headers['x-service-workspace']);
    if (workspace) setRateLimitHeaders(reply, deps.clock.now(), (await deps.usage.peek(workspace.id, resolveLimits(workspace))).minute);
  }
  return answer;
}

function authorized(route: KeyRoute, request: FastifyRequest, reply: FastifyReply, key: ApiKey, result: AuthContext | AppError): Outcome {
  return result instanceof AppError ? refuseAuthorization(route.deps, request, reply, key, result) : admit(route, request, reply, result);
}

/** The key is known: may it use this route, for this workspace, over this transport, from here? */
function authenticated(route: KeyRoute, request: FastifyRequest, reply: FastifyReply, key: ApiKey | AppError): Outcome {
  if (key instanceof AppError) return key;
  const result = checkAuthorization(route.deps, key, {
    workspaceHeader: request.headers['x-service-workspace'],
    scope: route.meta.scope,
    // A tool call of the MCP endpoint, replayed in-process onto this route (mcp/internal.ts).
    transport: request.headers[MCP_INTERNAL_HEADER] !== undefined && isInternalMcpRequest(request.headers[MCP_INTERNAL_HEADER]) ? 'mcp' : 'rest',
    // request.ip is only read when the key has ranges to check it against.
    ip: key.ipRanges.length > 0 ? request.ip : undefined,
  });
  return result instanceof Promise ? result.then((r) => authorized(route, request, reply, key, r)) : authorized(route, request, reply, key, result);
}

/**
 * Key routes: the presented key, its authorization for the route and workspace, then the route's
 * points. Synchronous while everything it needs is in memory (the common case), else a promise.
 */
function keyHook(route: KeyRoute): onRequestHookHandler {
  return function authenticateKey(request, reply, done) {
    request.routeMeta = route.meta;
    let outcome: Outcome;
    try {
      const url = request.url;
      const key = checkPresentedKey(route.deps, { authorization: request.headers.authorization, query: url.indexOf('?') < 0 ? NO_QUERY : queryPairs(url) });
      outcome = key instanceof Promise ? key.then((k) => authenticated(route, request, reply, k)) : authenticated(route, request, reply, key);
    } catch (err) {
      return done(err as Error);
    }
    if (outcome instanceof Promise) {
      outcome
        .then((refusal) => continueOrRefuse(request, reply, done, refusal), (err: Error) => done(err))
        // continueOrRefuse() hands the request on to Fastify, which answers its own errors;
        // anything that still escapes must not become an unhandled rejection.
        .catch((err: unknown) => request.log.error({ err }, 'auth hook continuation failed'));
    } else continueOrRefuse(request, reply, done, outcome);
  };
}

/** For routes whose service charges the points: the headers as they are when the response goes out. */
function refreshRateLimitHook(deps: Deps): onSendHookHandler {
  return (request, reply, payload, done) => {
    const auth = request.auth;
    const view = auth && deps.usage.peekNow(auth.workspace.id, resolveLimits(auth.workspace));
    if (view) setRateLimitHeaders(reply, deps.clock.now(), view.minute);
    done(null, payload);
  };
}

export function registerAuthHook(app: FastifyInstance, deps: Deps): void {
  const adminTokenHash = deps.config.adminToken ? sha256Hex(deps.config.adminToken) : undefined;
  const refreshRateLimit = refreshRateLimitHook(deps);
  app.decorateRequest('auth', undefined);
  app.decorateRequest('routeMeta', undefined);
  // Attached per route (HEAD twins included: Fastify declares them through this hook too).
  app.addHook('onRoute', (route: RouteOptions) => {
    const meta = (route.config as { meta?: RouteMeta } | undefined)?.meta;
    if (!meta || meta.auth === 'none') return;
    const endpoint = `${Array.isArray(route.method) ? route.method[0] : route.method} ${route.url}`;
    const hook = meta.auth === 'admin' ? adminHook(adminTokenHash, meta) : keyHook({ deps, meta, endpoint });
    route.onRequest = [...toArray(route.onRequest), hook];
    if (meta.auth === 'key' && meta.points === 'service') route.onSend = [...toArray(route.onSend), refreshRateLimit];
  });
}
