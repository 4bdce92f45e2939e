/**
 * One small fetch-based transport: the key and workspace headers, the response envelope, typed
 * errors and the retry rule. A request is sent again only when that cannot do anything twice:
 * reads (GET), and writes that carry an Idempotency-Key (the service replays the stored answer).
 * Retried: network failures, 5xx, 429 (after Retry-After) and 409 IDEMPOTENCY_IN_PROGRESS (the
 * first copy of a keyed write is still running). A Retry-After longer than `maxRetryDelayMs`
 * (a budget that resets tomorrow) is not waited for: the error is thrown at once.
 */
import { ConnectionError, ServiceError } from './errors.js';

export interface TransportOptions {
  /** The service's address, e.g. `https://automation.example.com` (no /v1). */
  baseUrl: string;
  /** An API key (`wask_…`). */
  apiKey: string;
  /** The workspace UUID every request selects (X-Service-Workspace). */
  workspaceId: string;
  /** A fetch implementation (default: globalThis.fetch). */
  fetch?: typeof fetch;
  /** Attempts after the first one for retryable requests (default 5). */
  maxRetries?: number;
  /** Longest wait before a retry, Retry-After included (default 30 s). */
  maxRetryDelayMs?: number;
  /** First back-off delay; doubled per attempt, with jitter (default 200 ms). */
  retryBaseDelayMs?: number;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** An array value is sent once per element (a repeatable parameter such as groupBy). */
  query?: Record<string, string | number | readonly string[] | undefined> | undefined;
  /** A JSON body (serialised here) … */
  json?: unknown;
  /** … or a raw one (multipart, streams); never retried. */
  body?: RequestInit['body'] | undefined;
  headers?: Record<string, string> | undefined;
  signal?: AbortSignal | undefined;
  /** May the request be sent more than once (see the header)? */
  retry: boolean;
}

export interface Reply<T> {
  data: T;
  status: number;
  headers: Headers;
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const done = () => {
      signal?.removeEventListener('abort', abort);
      resolve();
    };
    const timer = setTimeout(done, ms);
    const abort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Exponential back-off with full jitter: a random delay in [base·2^attempt / 2, base·2^attempt], capped. */
export function backoffDelay(attempt: number, baseMs: number, capMs: number): number {
  const ceiling = Math.min(capMs, baseMs * 2 ** attempt);
  return Math.round(ceiling / 2 + Math.random() * (ceiling / 2));
}

function isAbort(err: unknown, signal?: AbortSignal): boolean {
  return Boolean(signal?.aborted) || (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'));
}

export function retryableStatus(status: number, code: string): boolean {
  return status >= 500 || status === 429 || (status === 409 && code === 'IDEMPOTENCY_IN_PROGRESS');
}

/** The ServiceError of a non-2xx response (its body is read here). */
export async function errorFromResponse(res: Response): Promise<ServiceError> {
  const text = await res.text().catch(() => '');
  let body: { code?: unknown; message?: unknown; requestId?: unknown; details?: unknown } = {};
  try {
    body = text ? (JSON.parse(text) as typeof body) : {};
  } catch {
    body = {};
  }
  return new ServiceError({
    code: typeof body.code === 'string' ? body.code : `HTTP_${res.status}`,
    message: typeof body.message === 'string' ? body.message : text.slice(0, 200) || res.statusText,
    status: res.status,
    requestId: typeof body.requestId === 'string' ? body.requestId : (res.headers.get('x-request-id') ?? undefined),
    details: body.details && typeof body.details === 'object' ? (body.details as Record<string, unknown>) : undefined,
    retryAfter: parseRetryAfter(res.headers.get('retry-after')),
  });
}

export class Transport {
  readonly baseUrl: string;
  readonly workspaceId: string;
  private readonly fetchImpl: typeof fetch;
  private readonly baseHeaders: Record<string, string>;
  readonly maxRetries: number;
  readonly maxRetryDelayMs: number;
  readonly retryBaseDelayMs: number;

  constructor(options: TransportOptions) {
    if (!options.baseUrl) throw new TypeError('baseUrl is required');
    if (!options.apiKey) throw new TypeError('apiKey is required');
    if (!options.workspaceId) throw new TypeError('workspaceId is required');
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.workspaceId = options.workspaceId;
    const f = options.fetch ?? globalThis.fetch;
    this.fetchImpl = (input, init) => f(input, init);
    this.baseHeaders = { authorization: `Bearer ${options.apiKey}`, 'x-service-workspace': options.workspaceId };
    this.maxRetries = options.maxRetries ?? 5;
    this.maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000;
    this.retryBaseDelayMs = options.retryBaseDelayMs ?? 200;
  }

  url(path: string, query?: RequestSpec['query']): string {
    let url = this.baseUrl + path;
    if (query) {
      const params = Object.entries(query).flatMap(([k, v]): [string, string][] => (v === undefined ? [] : Array.isArray(v) ? v.map((x) => [k, String(x)]) : [[k, String(v)]]));
      if (params.length) url += `?${params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&')}`;
    }
    return url;
  }

  /** fetch itself, for streams the caller reads (no envelope, no retry). */
  rawFetch(url: string, init: RequestInit): Promise<Response> {
    return this.fetchImpl(url, init);
  }

  /** The headers every request carries (key and workspace), plus `extra`. */
  headers(extra?: Record<string, string>): Record<string, string> {
    return extra ? { ...this.baseHeaders, ...extra } : this.baseHeaders;
  }

  /** Sends the request (retrying as the spec allows) and returns the successful Response, body unread. */
  async send(spec: RequestSpec): Promise<Response> {
    const url = this.url(spec.path, spec.query);
    const headers = this.headers(spec.json !== undefined ? { 'content-type': 'application/json', ...spec.headers } : spec.headers);
    const body = spec.json !== undefined ? JSON.stringify(spec.json) : spec.body;
    const init: RequestInit & { duplex?: 'half' } = { method: spec.method, headers, body: body ?? null, signal: spec.signal ?? null };
    if (body && typeof (body as ReadableStream).getReader === 'function') init.duplex = 'half';
    for (let attempt = 0; ; attempt++) {
      let res: Response;
      try {
        res = await this.fetchImpl(url, init);
      } catch (err) {
        if (isAbort(err, spec.signal ?? undefined)) throw err;
        if (!spec.retry || attempt >= this.maxRetries) {
          throw new ConnectionError(`${spec.method} ${spec.path}: ${(err as Error)?.message ?? String(err)}${attempt ? ` (after ${attempt + 1} attempts)` : ''}`, { cause: err });
        }
        await sleep(backoffDelay(attempt, this.retryBaseDelayMs, this.maxRetryDelayMs), spec.signal ?? undefined);
        continue;
      }
      if (res.ok) return res;
      const error = await errorFromResponse(res);
      if (!spec.retry || attempt >= this.maxRetries || !retryableStatus(error.status, error.code)) throw error;
      const wait = error.retryAfter !== undefined ? error.retryAfter * 1000 + Math.round(Math.random() * this.retryBaseDelayMs) : backoffDelay(attempt, this.retryBaseDelayMs, this.maxRetryDelayMs);
      if (wait > this.maxRetryDelayMs) throw error;
      await sleep(wait, spec.signal ?? undefined);
    }
  }

  /** A request whose success body is the envelope; returns its `data`. */
  async json<T>(spec: RequestSpec): Promise<Reply<T>> {
    const res = await this.send(spec);
    const text = await res.text();
    let envelope: { success?: unknown; data?: unknown };
    try {
      envelope = JSON.parse(text) as typeof envelope;
    } catch {
      throw new ServiceError({ code: 'INVALID_RESPONSE', message: `${spec.method} ${spec.path}: the response is not JSON`, status: res.status, requestId: res.headers.get('x-request-id') ?? undefined });
    }
    return { data: envelope.data as T, status: res.status, headers: res.headers };
  }
}
