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
  /**
   * Accept whatever TLS the server offers: any certificate (expired, self-signed, for another
   * name) and TLS 1.0 and 1.1 too. Only for the security scanner, which judges the certificate and
   * the protocol itself with `tlsProbe` and still wants the answers of a site whose TLS is bad.
   * The address policy and DNS pinning are unchanged, and such requests never share a connection
   * with verified ones.
   */
  acceptAnyTls?: boolean;
  /**
   * Streams the answer's body as it arrives (a provider's server-sent events): called with the
   * status and headers of the answer (after any redirects). When it returns a function, the
   * decoded body is handed to it chunk by chunk, still within `maxBytes` and the deadline, and the
   * response's `body` is empty; when it returns undefined the body is read whole, as usual.
   */
  onBody?: (head: { status: number; headers: EgressResponse['headers'] }) => ((chunk: Buffer) => void) | undefined;
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

export interface TlsProbeRequest {
  /** A DNS name (resolved once, pinned, every answer checked) or an IP literal (checked as is). */
  host: string;
  port: number;
  /**
   * The protocol versions offered: `modern` (TLS 1.2 and 1.3, Node's defaults) or `legacy` (only
   * TLS 1.0 and 1.1, with OpenSSL's security level lowered so such a handshake can complete at all:
   * it tells whether the server still accepts them). Default `modern`.
   */
  protocols?: 'modern' | 'legacy';
  /** TCP connect + handshake deadline. Default 5 s. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A certificate as presented, in plain fields (times ISO 8601). */
export interface TlsCertificateInfo {
  subject: string;
  issuer: string;
  /** `DNS:name` and `IP Address:addr` entries of the subjectAltName extension. */
  subjectAltNames: string[];
  validFrom: string;
  validTo: string;
  serialNumber: string;
  fingerprintSha256: string;
  /** Issued by its own key (subject = issuer and its signature verifies with its own public key). */
  selfSigned: boolean;
}

/**
 * What one handshake showed. `refused`: the TCP connection was made but the server would not
 * complete a handshake with what was offered (a finding about the server, not a network failure).
 */
export type TlsProbeResult =
  | {
      handshake: 'completed';
      /** The address connected to. */
      address: string;
      /** Negotiated protocol, as OpenSSL names it (`TLSv1.3`). */
      protocol: string;
      cipher: string;
      /** Node's verdict: the chain is trusted, within its validity period and names the host. */
      authorized: boolean;
      /** OpenSSL's or Node's reason when not authorized (`CERT_HAS_EXPIRED`, `ERR_TLS_CERT_ALTNAME_INVALID` …). */
      authorizationError: string | null;
      /** Whether the leaf names `host` (RFC 6125 rules of tls.checkServerIdentity), judged on its own. */
      hostnameError: string | null;
      certificate: TlsCertificateInfo;
      /** The chain as presented, leaf first (at most 8 entries). */
      chain: TlsCertificateInfo[];
    }
  | { handshake: 'refused'; address: string; reason: string };

export interface Egress {
  request(url: string, init?: EgressRequest): Promise<EgressResponse>;
  /**
   * One TLS handshake with `host:port` under the same address policy and DNS pinning as
   * `request`, without verifying (the certificate is reported, with how it would be judged);
   * nothing is sent after the handshake. Network failures are EgressErrors as for `request`.
   */
  tlsProbe(request: TlsProbeRequest): Promise<TlsProbeResult>;
  close(): Promise<void>;
}
