/**
 * The console's HTTP plumbing: the session cookie, the same-origin check and CSRF token of every
 * change, and the hook that turns a cookie into `request.consoleSession`.
 *
 * - The cookie is HttpOnly, SameSite=Lax, Path=/; Secure and named with the `__Host-` prefix when
 *   PUBLIC_BASE_URL is https (the prefix requires Secure, so a plain-http instance cannot use it).
 * - Console endpoints never accept an API key: a request with an Authorization header is 401,
 *   whatever else it carries. The public API and /mcp read only the Authorization header, so a
 *   session cookie means nothing to them.
 * - Every POST must come from the console's own origin (the `Origin` header equals the origin of
 *   PUBLIC_BASE_URL; 403 FORBIDDEN_ORIGIN otherwise, a missing header included) and, once signed
 *   in, carry the session's CSRF token in `X-CSRF-Token` (403 FORBIDDEN otherwise).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { csrfTokenMatches, findLiveSession, SESSION_LIFETIME_MS, type ConsoleSession } from './sessions.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The console session of a /console/api request (set by the console's hook). */
    consoleSession?: ConsoleSession;
  }
}

export interface CookieSettings {
  name: string;
  secure: boolean;
}

export function cookieSettings(publicBaseUrl: string): CookieSettings {
  const secure = new URL(publicBaseUrl).protocol === 'https:';
  return { name: secure ? '__Host-was_console' : 'was_console', secure };
}

function cookieAttributes(settings: CookieSettings): string {
  return `Path=/; HttpOnly; SameSite=Lax${settings.secure ? '; Secure' : ''}`;
}

export function setSessionCookie(reply: FastifyReply, settings: CookieSettings, token: string): void {
  reply.header('Set-Cookie', `${settings.name}=${token}; Max-Age=${Math.floor(SESSION_LIFETIME_MS / 1000)}; ${cookieAttributes(settings)}`);
}

export function clearSessionCookie(reply: FastifyReply, settings: CookieSettings): void {
  reply.header('Set-Cookie', `${settings.name}=; Max-Age=0; ${cookieAttributes(settings)}`);
}

/** The value of cookie `name` in a Cookie header (the last one wins, as a browser never sends two of ours). */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  let found: string | undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) found = part.slice(eq + 1).trim();
  }
  return found && /^[A-Za-z0-9_-]{16,128}$/.test(found) ? found : undefined;
}

const NO_KEYS = new AppError('UNAUTHENTICATED', { message: 'Console endpoints take the console session cookie, never an API key or other Authorization header.' });
const NO_SESSION = new AppError('UNAUTHENTICATED', { message: 'Not signed in, or the session ended (signed out, idle too long or too old); sign in with a new link.' });

/** Refuses a state change that does not come from the console's own origin. */
export function checkOrigin(request: FastifyRequest, allowedOrigin: string): void {
  if (request.headers.origin !== allowedOrigin) {
    throw new AppError('FORBIDDEN_ORIGIN', { message: `Changes are accepted only from the console's own origin (${allowedOrigin}).` });
  }
}

export interface ConsoleHookOptions {
  /** Routes that need no session (sign-in itself). */
  public?: boolean;
}

/**
 * Adds the console's checks to every route of `app` (an encapsulated plugin): no Authorization
 * header, same origin on POST, and unless the route is public a live session (plus its CSRF token
 * on POST). Answers are never cached.
 */
export function registerConsoleHooks(app: FastifyInstance, deps: Deps, cookie: CookieSettings): void {
  const origin = new URL(deps.config.publicBaseUrl).origin;
  app.addHook('onRequest', async (request, reply) => {
    reply.header('Cache-Control', 'no-store');
    if (request.headers.authorization !== undefined) throw NO_KEYS;
    if (request.method !== 'GET' && request.method !== 'HEAD') checkOrigin(request, origin);
    const options = (request.routeOptions.config as { console?: ConsoleHookOptions }).console;
    if (options?.public) return;
    const token = readCookie(request.headers.cookie, cookie.name);
    const session = token === undefined ? undefined : await findLiveSession(deps, token);
    if (!session) throw NO_SESSION;
    if (request.method !== 'GET' && request.method !== 'HEAD' && !csrfTokenMatches(session.token, request.headers['x-csrf-token'])) {
      throw new AppError('FORBIDDEN', { message: 'The X-CSRF-Token header is missing or does not belong to this session; reload the console.' });
    }
    request.consoleSession = session;
  });
}

declare module 'fastify' {
  interface FastifyContextConfig {
    console?: ConsoleHookOptions;
  }
}
