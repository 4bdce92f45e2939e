/**
 * One attempt of a security scan talking to its target: every request and handshake of the
 * checks goes through here, to the egress client (address policy, DNS pinning).
 *
 * Invariants: only the target's own hostname is ever contacted (a redirect elsewhere is reported,
 * never followed); requests go one at a time (each awaited before the next is made); an attempt
 * makes at most MAX_REQUESTS_PER_ATTEMPT requests and handshakes; each has a short deadline, capped
 * by what is left of the attempt's deadline (the route's `timeoutSeconds`). The page and the TLS
 * handshake are fetched once per attempt and shared by the checks that judge them.
 */
import type { Egress, EgressRequest, EgressResponse, TlsProbeResult } from '../../egress/types.js';
import { EgressError } from '../../egress/types.js';
import type { CheckStatus } from '../../operations/security-scan.js';
import { ProviderError } from '../types.js';

/** What one check concluded (the scanner adds its id). */
export interface CheckOutcome {
  status: CheckStatus;
  summary: string;
  evidence: Record<string, unknown>;
  /** Short advice, for a warn or a fail. */
  remedy?: string;
}

export type Check = (session: ScanSession) => Promise<CheckOutcome>;

/**
 * Requests and handshakes one attempt may make. A whole scan needs at most 14: two handshakes,
 * one plain-HTTP request, the page (up to three same-host redirects, and once more for its headers
 * alone when it is too large) and six well-known paths.
 */
export const MAX_REQUESTS_PER_ATTEMPT = 20;
const REQUEST_TIMEOUT_MS = 10_000;
const CONNECT_TIMEOUT_MS = 5_000;
/** The page is read up to this size for the mixed-content check; a longer one is judged by its headers. */
export const PAGE_MAX_BYTES = 2 * 1024 * 1024;
const PAGE_MAX_REDIRECTS = 3;
/**
 * The Origin the page is requested with, for the CORS check: `.invalid` can never be a real site
 * (RFC 2606), so a server that allows it allows any origin.
 */
export const FOREIGN_ORIGIN = 'https://security-scan.invalid';

/** A network failure of one request, as the job's error code (SCAN_TARGET_…) with the egress reason. */
export class ScanNetworkError extends ProviderError {
  constructor(
    code: string,
    message: string,
    readonly egressCode: string,
  ) {
    super(code, message);
    this.name = 'ScanNetworkError';
  }
}

const ERROR_CODES: Record<string, string> = {
  EGRESS_TIMEOUT: 'SCAN_TARGET_TIMEOUT',
  EGRESS_BLOCKED: 'SCAN_TARGET_BLOCKED',
  EGRESS_TOO_LARGE: 'SCAN_RESPONSE_TOO_LARGE',
};

export interface ScannedPage {
  /** The URL whose answer is judged (after same-host redirects). */
  url: string;
  status: number;
  headers: EgressResponse['headers'];
  /** Null when the page was larger than PAGE_MAX_BYTES (then only its headers were read). */
  body: Buffer | null;
  /** Where the page redirects when that is another host (not followed: only the target is scanned). */
  offHostRedirect?: string;
}

export interface ScanTarget {
  url: URL;
  /** Lower case, without a trailing dot. */
  hostname: string;
  /** The HTTPS port (443 unless the URL names one). */
  port: number;
}

export function scanTarget(input: string): ScanTarget {
  const url = new URL(input);
  // Credentials in the address are never sent anywhere; the fragment never leaves a browser either.
  url.username = '';
  url.password = '';
  url.hash = '';
  return { url, hostname: url.hostname.toLowerCase().replace(/\.$/, ''), port: url.port ? Number(url.port) : 443 };
}

export class ScanSession {
  /** Requests and handshakes made so far in this attempt. */
  requests = 0;
  private probe?: Promise<TlsProbeResult>;
  private legacyProbe?: Promise<TlsProbeResult>;
  private page?: Promise<ScannedPage>;

  constructor(
    private readonly egress: Egress,
    readonly target: ScanTarget,
    private readonly deadlineAt: number,
    private readonly signal: AbortSignal,
  ) {}

  /** The handshake offering TLS 1.2 and 1.3 (shared by the TLS and certificate checks). */
  modernHandshake(): Promise<TlsProbeResult> {
    this.probe ??= this.handshake('modern');
    return this.probe;
  }

  /** The handshake offering only TLS 1.0 and 1.1. */
  legacyHandshake(): Promise<TlsProbeResult> {
    this.legacyProbe ??= this.handshake('legacy');
    return this.legacyProbe;
  }

  /** The handshake the certificate checks judge: the modern one, else the legacy one; none at all fails the job. */
  async certificateHandshake(): Promise<Extract<TlsProbeResult, { handshake: 'completed' }>> {
    const modern = await this.modernHandshake();
    if (modern.handshake === 'completed') return modern;
    const legacy = await this.legacyHandshake();
    if (legacy.handshake === 'completed') return legacy;
    throw new ProviderError(
      'SCAN_TARGET_UNREACHABLE',
      `No TLS handshake could be completed with ${this.target.hostname}:${this.target.port} (${modern.reason}).`,
    );
  }

  /** The target page (GET, same-host redirects followed), fetched once per attempt. */
  targetPage(): Promise<ScannedPage> {
    this.page ??= this.fetchPage();
    return this.page;
  }

  /**
   * One request to the target's hostname (any scheme or port of it), never following redirects.
   * Any TLS is accepted here (certificate, protocol version): the TLS checks judge it, and the
   * other checks still judge the site's answers when its TLS is bad.
   */
  async request(url: string, init: Omit<EgressRequest, 'signal' | 'timeoutMs' | 'connectTimeoutMs' | 'maxRedirects' | 'acceptAnyTls'> = {}): Promise<EgressResponse> {
    const parsed = new URL(url);
    if (parsed.hostname.toLowerCase().replace(/\.$/, '') !== this.target.hostname) {
      throw new Error(`security scan: ${parsed.hostname} is not the scanned host`);
    }
    const timeoutMs = this.nextDeadline();
    return this.guard(() =>
      this.egress.request(url, {
        ...init,
        maxRedirects: 0,
        acceptAnyTls: true,
        timeoutMs,
        connectTimeoutMs: Math.min(CONNECT_TIMEOUT_MS, timeoutMs),
        signal: this.signal,
      }),
    );
  }

  private async handshake(protocols: 'modern' | 'legacy'): Promise<TlsProbeResult> {
    const timeoutMs = Math.min(CONNECT_TIMEOUT_MS, this.nextDeadline());
    return this.guard(() => this.egress.tlsProbe({ host: this.target.hostname, port: this.target.port, protocols, timeoutMs, signal: this.signal }));
  }

  private async fetchPage(): Promise<ScannedPage> {
    const headers = { accept: 'text/html,application/xhtml+xml;q=0.9,*/*;q=0.5', origin: FOREIGN_ORIGIN };
    let url = this.target.url.href;
    for (let hop = 0; ; hop++) {
      let res: EgressResponse;
      try {
        res = await this.request(url, { headers, maxBytes: PAGE_MAX_BYTES });
      } catch (err) {
        if (!(err instanceof ScanNetworkError) || err.egressCode !== 'EGRESS_TOO_LARGE') throw err;
        // Too large to inspect: its headers are still judged.
        res = await this.request(url, { headers, maxBytes: PAGE_MAX_BYTES, discardBody: true });
        return { url, status: res.status, headers: res.headers, body: null };
      }
      const location = res.status >= 300 && res.status < 400 ? firstValue(res.headers.location) : undefined;
      if (location === undefined) return { url, status: res.status, headers: res.headers, body: res.body };
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        return { url, status: res.status, headers: res.headers, body: res.body };
      }
      const sameHost = next.protocol === 'https:' && next.hostname.toLowerCase().replace(/\.$/, '') === this.target.hostname;
      if (!sameHost || hop >= PAGE_MAX_REDIRECTS) {
        return { url, status: res.status, headers: res.headers, body: res.body, ...(sameHost ? {} : { offHostRedirect: next.href }) };
      }
      next.hash = '';
      url = next.href;
    }
  }

  /** Counts one request against the bound and returns its deadline (what is left of the attempt's, at most 10 s). */
  private nextDeadline(): number {
    this.signal.throwIfAborted();
    if (this.requests >= MAX_REQUESTS_PER_ATTEMPT) {
      throw new ProviderError('PROVIDER_ERROR', `The scan needed more than ${MAX_REQUESTS_PER_ATTEMPT} requests.`);
    }
    const left = this.deadlineAt - Date.now();
    if (left <= 0) throw new ProviderError('SCAN_TARGET_TIMEOUT', `${this.target.hostname} did not answer the scan within the route's timeoutSeconds.`);
    this.requests++;
    return Math.min(REQUEST_TIMEOUT_MS, left);
  }

  /** Egress failures become the job's SCAN_TARGET_… codes; the attempt's own abort passes through. */
  private async guard<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (err) {
      if (this.signal.aborted || !(err instanceof EgressError)) throw err;
      const code = ERROR_CODES[err.code] ?? 'SCAN_TARGET_UNREACHABLE';
      throw new ScanNetworkError(code, `${this.target.hostname}: ${err.message}`, err.code);
    }
  }
}

export function firstValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A response header as one string (repeated fields joined with ", "), or undefined. */
export function headerValue(headers: EgressResponse['headers'], name: string): string | undefined {
  const value = headers[name];
  if (value === undefined) return undefined;
  return Array.isArray(value) ? value.join(', ') : value;
}

/** At most `max` characters of a header for evidence. */
export function clip(text: string, max = 500): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}
