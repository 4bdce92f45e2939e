/**
 * The service's one guarded outbound HTTP client.
 *
 * Invariant: a socket is only ever opened to an address that passed the address policy
 * (`./address-policy.ts`) at the moment of connecting. Host names are resolved exactly once per
 * connection, inside the connection's own `lookup`, every resolved address is checked, and the
 * socket is handed only those checked addresses (DNS pinning: no second resolution between check
 * and connect). IP-literal hosts never reach `lookup`, so they are checked before dispatch. Every
 * redirect hop is re-validated the same way. No raw undici / node error escapes: failures become
 * `EgressError`, except a caller-initiated abort (see `request` below). The TLS handshake probe
 * (`./tls-probe.ts`) connects through the same policy and the same pinned lookup.
 */
import dns from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { Agent, request as undiciRequestType } from 'undici';

let undiciModule: Promise<typeof import('undici')> | undefined;
/** undici (about 110 modules) loads with the first outbound request, not with the service. */
function undici(): Promise<typeof import('undici')> {
  return (undiciModule ??= import('undici'));
}
import { compileAllowList, isIpAllowed, parseIpLiteral, type AllowList } from './address-policy.js';
import { checkDeclaredLength, decodersFor, readCappedBody } from './body.js';
import { DNS_ERROR_CODES, toEgressError } from './errors.js';
import { RequestAbort } from './request-abort.js';
import { probeTls } from './tls-probe.js';
import { EgressError, type Egress, type EgressRequest, type EgressResponse, type TlsProbeRequest, type TlsProbeResult } from './types.js';

export { isAddressAllowed } from './address-policy.js';

export interface EgressOptions {
  /** CIDRs or single IPs (v4/v6) allowed even though they are not public unicast (e.g. an internal service). */
  allowCidrs: string[];
  /** Default `user-agent` (a per-request `user-agent` header wins). */
  userAgent?: string;
}

export const DEFAULT_USER_AGENT = 'WorkspaceAutomationService/1.0';
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
const DEFAULT_MAX_REDIRECTS = 5;
/** How much of a redirect's body we read to keep the connection reusable before giving up on it. */
const REDIRECT_DRAIN_LIMIT = 64 * 1024;

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Headers the client owns: callers cannot set them (hop-by-hop, framing, Host, encoding). */
const RESERVED_HEADERS = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'content-length',
  'accept-encoding',
]);
/** `acceptAnyTls`: no certificate check, and TLS 1.0 / 1.1 allowed (their handshakes need OpenSSL's security level 0). */
const ANY_TLS = { rejectUnauthorized: false, minVersion: 'TLSv1', ciphers: 'DEFAULT:@SECLEVEL=0' } as const;
/** Dropped when a redirect leaves the current origin. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie']);
const CREDENTIAL_HEADER_PATTERN = /(auth|token|secret|password|api[-_]?key|session|cookie|signature)/i;
/** Dropped when a redirect turns the request into a body-less GET (fetch "request-body-header names"). */
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];

type Method = NonNullable<EgressRequest['method']>;

function positiveOr(value: number | undefined, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}

function blocked(host: string): EgressError {
  return new EgressError('EGRESS_BLOCKED', `destination ${host} is not a permitted address`);
}

/**
 * Parses and validates one hop's URL: http(s) only, no userinfo, IP-literal hosts checked against
 * the policy right here (the connection's lookup is never consulted for literals).
 */
function checkUrl(input: string, base: URL | undefined, allow: AllowList): URL {
  let url: URL;
  try {
    url = base ? new URL(input, base) : new URL(input);
  } catch {
    throw new EgressError('EGRESS_BAD_URL', 'not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new EgressError('EGRESS_BAD_URL', `scheme ${url.protocol} is not allowed`);
  }
  if (url.username !== '' || url.password !== '') {
    throw new EgressError('EGRESS_BAD_URL', 'URLs with credentials are not allowed');
  }
  if (url.hostname === '') throw new EgressError('EGRESS_BAD_URL', 'URL has no host');
  const literal = parseIpLiteral(url.hostname);
  if (literal && !isIpAllowed(literal, allow)) throw blocked(url.hostname);
  url.hash = '';
  return url;
}

/**
 * The pinned resolver handed to every socket: one resolution, all answers checked, and exactly the
 * checked answers returned to `net` (which then connects to one of them and nothing else).
 */
function pinnedLookup(allow: AllowList): LookupFunction {
  return (hostname, options, callback) => {
    const family = typeof options.family === 'number' ? options.family : options.family === 'IPv6' ? 6 : options.family === 'IPv4' ? 4 : 0;
    dns.lookup(hostname, { all: true, family, hints: options.hints, verbatim: true }, (err, addresses) => {
      if (err) {
        const code = err.code ?? 'unknown';
        callback(new EgressError(DNS_ERROR_CODES.has(code) ? 'EGRESS_DNS' : 'EGRESS_NETWORK', `cannot resolve ${hostname} (${code})`), '');
        return;
      }
      if (addresses.length === 0) {
        callback(new EgressError('EGRESS_DNS', `no address for ${hostname}`), '');
        return;
      }
      for (const { address } of addresses) {
        const ip = parseIpLiteral(address);
        if (!ip || !isIpAllowed(ip, allow)) {
          callback(blocked(hostname), '');
          return;
        }
      }
      if (options.all) {
        callback(null, addresses);
      } else {
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      }
    });
  };
}

function buildHeaders(given: Record<string, string> | undefined, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(given ?? {})) {
    const key = name.toLowerCase();
    if (!RESERVED_HEADERS.has(key)) headers[key] = value;
  }
  headers['user-agent'] ??= userAgent;
  headers['accept-encoding'] = 'gzip, deflate, br';
  return headers;
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** What every request of one egress client shares: its address policy, caches and connection pools. */
interface EgressContext {
  allow: AllowList;
  userAgent: string;
  /** A start URL parsed and checked against the policy (cached: the same destinations come back). */
  checkStartUrl(input: string): URL;
  /** The keep-alive pool for a connect timeout and TLS mode. */
  agentFor(connectTimeoutMs: number, acceptAnyTls: boolean): Promise<Agent>;
}

/** Where a request goes next and what it sends: changed by each redirect it follows. */
interface Hop {
  url: URL;
  method: Method;
  body: EgressRequest['body'];
  headers: Record<string, string>;
}

type UndiciResponse = Awaited<ReturnType<typeof undiciRequestType>>;

/**
 * Follows a redirect to `location`: checked against the policy like the start URL; a POST
 * answered 301/302, or anything but GET/HEAD answered 303, becomes a GET without its body; no
 * credential header crosses to another origin.
 */
function redirectHop(hop: Hop, location: string, status: number, allow: AllowList): void {
  const next = checkUrl(location, hop.url, allow);
  if (((status === 301 || status === 302) && hop.method === 'POST') || (status === 303 && hop.method !== 'GET' && hop.method !== 'HEAD')) {
    hop.method = 'GET';
    hop.body = undefined;
    for (const name of BODY_HEADERS) delete hop.headers[name];
  }
  if (next.origin !== hop.url.origin) {
    for (const name of Object.keys(hop.headers)) {
      if (CREDENTIAL_HEADERS.has(name) || CREDENTIAL_HEADER_PATTERN.test(name)) delete hop.headers[name];
    }
  }
  hop.url = next;
}

/** The final response: its body drained (discardBody) or read decoded up to maxBytes. */
async function finalResponse(res: UndiciResponse, hop: Hop, init: EgressRequest, maxBytes: number, signal: RequestAbort): Promise<EgressResponse> {
  if (init.discardBody) {
    // Drained, not decoded: nothing is buffered, and the socket goes back to the pool when the
    // body was short (undici destroys it when the limit is exceeded).
    // (The request's signal also covers its body: an abort or the deadline stops the drain.)
    await res.body.dump({ limit: maxBytes }).catch(() => undefined);
    return { status: res.statusCode, headers: res.headers, body: Buffer.alloc(0), url: hop.url.href };
  }
  try {
    checkDeclaredLength(res.headers['content-length'], maxBytes);
    const bodyless = hop.method === 'HEAD' || res.statusCode === 204 || res.statusCode === 304;
    const decoders = bodyless ? [] : decodersFor(res.headers['content-encoding']);
    const sink = init.onBody?.({ status: res.statusCode, headers: res.headers });
    const data = await readCappedBody(res.body, decoders, maxBytes, signal, sink);
    const outHeaders: EgressResponse['headers'] = { ...res.headers };
    if (decoders.length > 0) {
      // The body we return is decoded, so the wire framing headers no longer describe it.
      delete outHeaders['content-encoding'];
      delete outHeaders['content-length'];
    }
    return { status: res.statusCode, headers: outHeaders, body: data, url: hop.url.href };
  } catch (err) {
    if (!res.body.destroyed) res.body.destroy();
    throw err;
  }
}

/** One request and the redirects it follows; `progress.responses` counts the answers received. */
async function follow(ctx: EgressContext, startUrl: string, init: EgressRequest, signal: RequestAbort, progress: { responses: number }): Promise<EgressResponse> {
  const maxBytes = positiveOr(init.maxBytes, DEFAULT_MAX_BYTES);
  const maxRedirects = init.maxRedirects === undefined ? DEFAULT_MAX_REDIRECTS : Math.max(0, Math.floor(init.maxRedirects));
  const dispatcher = await ctx.agentFor(positiveOr(init.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS), init.acceptAnyTls === true);
  const { request: undiciRequest } = await undici();
  const hop: Hop = { url: ctx.checkStartUrl(startUrl), method: init.method ?? 'GET', body: init.body, headers: buildHeaders(init.headers, ctx.userAgent) };
  for (let redirects = 0; ; redirects++) {
    const res = await undiciRequest(hop.url, { dispatcher, method: hop.method, headers: hop.headers, body: hop.body, signal });
    progress.responses++;
    // Whatever happens to the body later (our own destroy, an abort), it must never become an
    // unhandled 'error' event; failures are reported through the awaited promises instead.
    res.body.on('error', () => undefined);
    const location = REDIRECT_STATUSES.has(res.statusCode) ? firstHeader(res.headers.location) : undefined;
    if (location === undefined || maxRedirects === 0) return finalResponse(res, hop, init, maxBytes, signal);
    await res.body.dump({ limit: REDIRECT_DRAIN_LIMIT }).catch(() => undefined);
    if (redirects >= maxRedirects) throw new EgressError('EGRESS_TOO_MANY_REDIRECTS', `more than ${maxRedirects} redirects`);
    redirectHop(hop, location, res.statusCode, ctx.allow);
  }
}

/**
 * A request under its deadline (`timeoutMs`: EGRESS_TIMEOUT) and the caller's signal (its reason
 * rethrown unchanged, as fetch does); every other failure as an EgressError that says whether a
 * response had arrived.
 */
async function requestWithDeadline(ctx: EgressContext, url: string, init: EgressRequest): Promise<EgressResponse> {
  const callerSignal = init.signal;
  callerSignal?.throwIfAborted();
  const timeoutMs = positiveOr(init.timeoutMs, DEFAULT_TIMEOUT_MS);
  const abort = new RequestAbort(callerSignal);
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    abort.abort(new EgressError('EGRESS_TIMEOUT', `request exceeded ${timeoutMs} ms`));
  }, timeoutMs);
  callerSignal?.addEventListener('abort', abort, { once: true });
  const progress = { responses: 0 };
  try {
    return await follow(ctx, url, init, abort, progress);
  } catch (err) {
    const responded = progress.responses > 0;
    if (timedOut) throw new EgressError('EGRESS_TIMEOUT', `request exceeded ${timeoutMs} ms`, responded);
    if (callerSignal?.aborted) throw callerSignal.reason;
    const egressError = toEgressError(err);
    throw egressError.responded === responded ? egressError : new EgressError(egressError.code, egressError.message, responded);
  } finally {
    clearTimeout(timer);
    callerSignal?.removeEventListener('abort', abort);
  }
}

export function createEgress(options: EgressOptions): Egress {
  const allow = compileAllowList(options.allowCidrs);
  const lookup = pinnedLookup(allow);
  /**
   * Start URLs already parsed and checked (a pure function of the string and the policy): the
   * same destinations come back for every webhook delivery. Bounded; entries are never mutated.
   */
  const checkedUrls = new Map<string, URL>();
  /**
   * One keep-alive Agent per connect timeout in use (normally exactly one), and separate ones for
   * requests that accept any TLS (the security scanner), so a verified request never reuses a
   * connection whose certificate nobody checked.
   */
  const agents = new Map<string, Agent>();
  let closed = false;
  const ctx: EgressContext = {
    allow,
    userAgent: options.userAgent ?? DEFAULT_USER_AGENT,
    checkStartUrl(input) {
      let url = checkedUrls.get(input);
      if (!url) {
        url = checkUrl(input, undefined, allow);
        if (checkedUrls.size >= 1000) checkedUrls.clear();
        checkedUrls.set(input, url);
      }
      return url;
    },
    async agentFor(connectTimeoutMs, acceptAnyTls) {
      const key = `${connectTimeoutMs}:${acceptAnyTls}`;
      let agent = agents.get(key);
      if (!agent) {
        const { Agent } = await undici();
        // Another request may have made it meanwhile.
        agent = agents.get(key);
        if (agent) return agent;
        agent = new Agent({ connect: { lookup, timeout: connectTimeoutMs, ...(acceptAnyTls ? ANY_TLS : {}) } });
        agents.set(key, agent);
      }
      return agent;
    },
  };

  return {
    /**
     * Performs one guarded request. Errors are always `EgressError`, with one exception: when the
     * caller's own `init.signal` aborts, the signal's `reason` is rethrown unchanged (a DOMException
     * named "AbortError" unless the caller supplied another reason), as fetch does. The client's own
     * `timeoutMs` deadline yields EGRESS_TIMEOUT.
     */
    async request(url: string, init: EgressRequest = {}): Promise<EgressResponse> {
      if (closed) throw new EgressError('EGRESS_NETWORK', 'egress client is closed');
      return requestWithDeadline(ctx, url, init);
    },

    async tlsProbe(request: TlsProbeRequest): Promise<TlsProbeResult> {
      if (closed) throw new EgressError('EGRESS_NETWORK', 'egress client is closed');
      return probeTls(request, allow, lookup);
    },

    async close(): Promise<void> {
      closed = true;
      const all = [...agents.values()];
      agents.clear();
      await Promise.all(all.map((agent) => agent.close()));
    },
  };
}
