/**
 * The guarded TLS handshake probe (the security scanner's view of a server's TLS): one handshake
 * with `host:port`, without verifying, reporting what the server presented and how Node would
 * judge it. Nothing is sent after the handshake and the socket is closed at once.
 *
 * Invariant, as for the HTTP client: the socket only ever connects to an address that passed the
 * address policy at the moment of connecting. A DNS name is resolved once, by the client's own
 * pinned lookup (every answer checked, only checked answers handed to the socket); an IP literal
 * never reaches the lookup, so it is checked here before connecting.
 */
import type { LookupFunction } from 'node:net';
import { X509Certificate } from 'node:crypto';
import tls, { type ConnectionOptions, type DetailedPeerCertificate, type TLSSocket } from 'node:tls';
import { isIpAllowed, parseIpLiteral, type AllowList } from './address-policy.js';
import { errorCode, findEgressError, toEgressError } from './errors.js';
import { EgressError, type TlsCertificateInfo, type TlsProbeRequest, type TlsProbeResult } from './types.js';

const DEFAULT_TIMEOUT_MS = 5_000;
const MAX_CHAIN = 8;
const HOSTNAME = /^(?=.{1,253}$)[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?(?:\.[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;
/**
 * TLS 1.0 and 1.1 only. Their handshakes sign with SHA-1 / MD5-SHA-1, which OpenSSL 3 refuses at
 * its default security level: level 0 lets the probe learn whether the server still accepts them.
 */
const LEGACY: ConnectionOptions = { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' };

export async function probeTls(req: TlsProbeRequest, allow: AllowList, lookup: LookupFunction): Promise<TlsProbeResult> {
  const host = req.host.startsWith('[') && req.host.endsWith(']') ? req.host.slice(1, -1) : req.host;
  if (!Number.isInteger(req.port) || req.port < 1 || req.port > 65_535) throw new EgressError('EGRESS_BAD_URL', `port ${req.port} is not valid`);
  const literal = parseIpLiteral(host);
  if (literal) {
    if (!isIpAllowed(literal, allow)) throw new EgressError('EGRESS_BLOCKED', `destination ${host} is not a permitted address`);
  } else if (!HOSTNAME.test(host)) {
    throw new EgressError('EGRESS_BAD_URL', 'not a valid host name');
  }
  req.signal?.throwIfAborted();
  const timeoutMs = typeof req.timeoutMs === 'number' && req.timeoutMs > 0 ? req.timeoutMs : DEFAULT_TIMEOUT_MS;

  return new Promise<TlsProbeResult>((resolve, reject) => {
    let connected = false;
    let settled = false;
    const socket = tls.connect({
      host,
      port: req.port,
      lookup,
      // SNI never carries an IP address.
      ...(literal ? {} : { servername: host.replace(/\.$/, '') }),
      // The certificate is reported, not enforced: judging it is the caller's business.
      rejectUnauthorized: false,
      ...(req.protocols === 'legacy' ? LEGACY : {}),
    });
    const settle = (done: () => void) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      done();
      socket.destroy();
    };
    const onAbort = () => settle(() => reject(req.signal!.reason));
    const timer = setTimeout(() => settle(() => reject(new EgressError('EGRESS_TIMEOUT', `TLS handshake exceeded ${timeoutMs} ms`, connected))), timeoutMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      connected = true;
    });
    socket.once('secureConnect', () => settle(() => resolve(describe(socket, host))));
    socket.on('error', (err) => {
      settle(() => {
        // Connected, then the server would not finish a handshake with what was offered (an alert,
        // a reset): a finding about the server. Anything before the connection is a network failure.
        if (connected && !findEgressError(err)) resolve({ handshake: 'refused', address: socket.remoteAddress ?? '', reason: errorCode(err) ?? err.message });
        else reject(toEgressError(err));
      });
    });
  });
}

function describe(socket: TLSSocket, host: string): TlsProbeResult {
  const peer = socket.getPeerCertificate(true);
  const address = socket.remoteAddress ?? '';
  if (!peer || !peer.raw) return { handshake: 'refused', address, reason: 'the server presented no certificate' };
  const chain: TlsCertificateInfo[] = [];
  const seen = new Set<DetailedPeerCertificate>();
  for (let c: DetailedPeerCertificate | undefined = peer; c?.raw && !seen.has(c) && chain.length < MAX_CHAIN; c = c.issuerCertificate) {
    seen.add(c);
    chain.push(certificateInfo(c.raw));
  }
  const hostnameError = tls.checkServerIdentity(host.replace(/\.$/, ''), peer);
  const authorizationError = socket.authorizationError as unknown;
  return {
    handshake: 'completed',
    address,
    protocol: socket.getProtocol() ?? 'unknown',
    cipher: socket.getCipher()?.name ?? 'unknown',
    authorized: socket.authorized,
    authorizationError: socket.authorized ? null : String(authorizationError instanceof Error ? ((authorizationError as { code?: string }).code ?? authorizationError.message) : authorizationError),
    hostnameError: hostnameError ? hostnameError.message : null,
    certificate: chain[0]!,
    chain,
  };
}

/** Splits `DNS:a, DNS:b, IP Address:1.2.3.4` at the entry boundaries only (values may hold ", "). */
function altNames(text: string | undefined): string[] {
  if (!text) return [];
  return text.split(/, (?=(?:DNS|IP Address|email|URI|DirName|Registered ID|othername):)/);
}

function certificateInfo(raw: Buffer): TlsCertificateInfo {
  const x = new X509Certificate(raw);
  let selfSigned = false;
  try {
    // Not checkIssued(): it also demands the keyCertSign usage, which a leaf signing itself lacks.
    selfSigned = x.subject === x.issuer && x.verify(x.publicKey);
  } catch {
    selfSigned = false;
  }
  return {
    subject: x.subject.split('\n').join(', '),
    issuer: x.issuer.split('\n').join(', '),
    subjectAltNames: altNames(x.subjectAltName),
    validFrom: new Date(x.validFrom).toISOString(),
    validTo: new Date(x.validTo).toISOString(),
    serialNumber: x.serialNumber,
    fingerprintSha256: x.fingerprint256,
    selfSigned,
  };
}
