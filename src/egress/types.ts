/**
 * The one guarded outbound HTTP client's contract. Every request the service makes to the outside
 * (link previews, webhooks, domain checks, providers) goes through an `Egress`.
 */
export interface EgressRequest {
  method?: 'GET' | 'HEAD' | 'POST' | 'PUT';
  headers?: Record<string, string>;
  body?: string | Buffer;
  /** Whole request deadline (connect + headers + body). Default 10 s. */
  timeoutMs?: number;
  /** TCP/TLS connect deadline. Default 5 s. */
  connectTimeoutMs?: number;
  /** Largest (decompressed) body accepted; larger answers fail with EGRESS_TOO_LARGE. Default 5 MiB. */
  maxBytes?: number;
  /** Redirects followed, each re-checked (default 5). 0: a 3xx is returned as the response, never followed. */
  maxRedirects?: number;
  signal?: AbortSignal;
  /**
   * The caller needs only the status and headers (webhook deliveries): the body is drained up to
   * `maxBytes` so the kept-alive connection can be reused (or the connection is dropped when the
   * body is longer) and an empty body is returned; a long body is not an error then.
   */
  discardBody?: boolean;
}

export interface EgressResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The URL that answered (after redirects). */
  url: string;
}

export type EgressErrorCode =
  | 'EGRESS_BAD_URL'
  | 'EGRESS_BLOCKED'
  | 'EGRESS_DNS'
  | 'EGRESS_TIMEOUT'
  | 'EGRESS_TOO_LARGE'
  | 'EGRESS_TOO_MANY_REDIRECTS'
  | 'EGRESS_NETWORK';

export class EgressError extends Error {
  constructor(
    readonly code: EgressErrorCode,
    message: string,
    /**
     * Whether a destination answered before the failure (a redirect followed, or the response
     * being read): the request then reached the network and cost its work. False for a URL or
     * address refused before any connection, and for failures to resolve or connect.
     */
    readonly responded = false,
  ) {
    super(message);
    this.name = 'EgressError';
  }
}

export interface Egress {
  request(url: string, init?: EgressRequest): Promise<EgressResponse>;
  close(): Promise<void>;
}
