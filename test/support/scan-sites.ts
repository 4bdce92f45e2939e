/**
 * Real HTTPS sites on loopback for the security-scan tests, one per defect, each under its own
 * `*.scan.localhost` name (resolved to SCAN_ADDRESS, a loopback address of its own, by `useLocalhostNames`), with a certificate made
 * here: issued by the test CA of test/fixtures/tls (which the test process trusts through
 * NODE_EXTRA_CA_CERTS), expired, self-signed, or for another name.
 *
 * Plain HTTP is served where browsers look for it, on port 80, by one listener for all sites that
 * answers by Host header (the scanner has no other port to ask: see scan-redirect.ts). Binding it
 * needs root or `net.ipv4.ip_unprivileged_port_start <= 80`; without either, the file fails at once
 * saying so rather than asserting something weaker.
 *
 * Each site records every HTTP request (both ports), every TLS handshake (completed or refused)
 * and how many requests were in flight at once, so tests can bound what a scan did.
 */
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo, type Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';
import { FIXTURE_CERT } from './https-receiver.js';

const FIXTURE_KEY = FIXTURE_CERT.replace(/\.crt$/, '.key');
const DAY_MS = 86_400_000;
export const HTTP_PORT = 80;
/**
 * The loopback address this test process serves its sites on: one of 127.0.0.0/8 drawn per
 * process, so two copies of the suite running at once (a stress run) each have their own port 80.
 */
export const SCAN_ADDRESS = `127.${1 + Math.floor(Math.random() * 254)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

/**
 * A port of `host` where nothing listens and nothing can start listening while a test uses it: a
 * privileged port of the old small services (discard, echo, daytime…), which the kernel never
 * hands out to listen(0) or to an outgoing connection and which only root can bind (no test binds
 * them; the scan sites' port 80 is on an address of their own). A port bound and released for the
 * purpose could be taken by another process in between: a stress round (two suites at once) saw
 * "nothing listening" answered once. Each candidate is checked to refuse a connection.
 */
export async function refusingPort(host: string): Promise<number> {
  for (const port of [9, 7, 13, 19, 37, 79, 1]) {
    const refused = await new Promise<boolean>((resolve) => {
      const socket = net.connect({ host, port });
      socket.once('connect', () => {
        socket.destroy();
        resolve(false);
      });
      socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
    });
    if (refused) return port;
  }
  throw new Error(`every candidate port of ${host} accepts connections or fails otherwise`);
}

export type CertificateKind = 'trusted' | 'expired' | 'self-signed' | 'expired-self-signed' | { trustedFor: string };

export interface FileReply {
  status?: number;
  contentType?: string;
  body: string | Buffer;
}

export interface SiteSpec {
  hostname: string;
  certificate?: CertificateKind;
  /** Headers of the page at `/`. */
  headers?: Record<string, string | string[]>;
  /** HTML of the page at `/`. */
  html?: string;
  /** Other paths. */
  files?: Record<string, FileReply>;
  /** Unknown paths: 404, or the home page with 200 (a single-page app's fallback). */
  unknownPaths?: 'not-found' | 'home';
  /** What port 80 answers for this host: a redirect to the https site, the page in plain text, or a dropped connection. */
  plainHttp?: 'redirect' | 'page' | 'drop';
  /** Accept TLS 1.0 and 1.1 too (`also`), or nothing newer (`only`). */
  legacyTls?: 'also' | 'only';
  /** The page never ends (a body streamed until the client leaves). */
  endlessPage?: boolean;
}

export interface SiteRequest {
  scheme: 'https' | 'http';
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
}

export class ScanSite {
  readonly requests: SiteRequest[] = [];
  /** TLS handshakes attempted (completed or refused). */
  handshakes = 0;
  /** Most requests in flight at one time. */
  maxInFlight = 0;
  /** Page requests (`/`) have their connection dropped: the site goes down mid-scan. */
  dropPage = false;
  /** Page requests are never answered: the site hangs. */
  holdPage = false;
  private inFlight = 0;
  private readonly tlsSockets = new Set<TLSSocket>();
  private readonly usedSockets = new WeakSet<Socket>();

  constructor(
    readonly spec: SiteSpec,
    readonly server: https.Server,
  ) {}

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get hostname(): string {
    return this.spec.hostname;
  }

  url(path = '/'): string {
    return `https://${this.spec.hostname}:${this.port}${path}`;
  }

  /** TLS connections that carried no HTTP request: the scanner's handshake probes (refused ones included). */
  get probes(): number {
    return this.handshakes - [...this.tlsSockets].filter((s) => this.usedSockets.has(s)).length;
  }

  reset(): void {
    this.requests.length = 0;
    this.handshakes = 0;
    this.maxInFlight = 0;
    this.tlsSockets.clear();
    this.dropPage = false;
    this.holdPage = false;
  }

  /** Called for every request on either port: records it and tracks concurrency until it ends. */
  track(scheme: 'https' | 'http', req: http.IncomingMessage, res: http.ServerResponse): void {
    this.requests.push({ scheme, method: req.method ?? '', path: req.url ?? '', headers: req.headers });
    this.usedSockets.add(req.socket);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    let ended = false;
    const end = () => {
      if (!ended) (ended = true), this.inFlight--;
    };
    res.once('finish', end);
    res.once('close', end);
  }

  countHandshake(socket?: TLSSocket): void {
    this.handshakes++;
    if (socket) this.tlsSockets.add(socket);
  }
}

export function pageResponse(site: ScanSite, req: http.IncomingMessage, res: http.ServerResponse): void {
  const spec = site.spec;
  const path = (req.url ?? '/').split('?')[0]!;
  if (path === '/') {
    if (site.dropPage) return void req.socket.destroy();
    if (site.holdPage) return;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...spec.headers });
    if (spec.endlessPage) return streamForever(res);
    return void res.end(spec.html ?? '<!doctype html><title>site</title><p>Hello</p>');
  }
  const file = spec.files?.[path];
  if (file) {
    res.writeHead(file.status ?? 200, { 'content-type': file.contentType ?? 'application/octet-stream' });
    return void res.end(file.body);
  }
  if (spec.unknownPaths === 'home') {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    return void res.end(spec.html ?? '<!doctype html><title>site</title>');
  }
  res.writeHead(404, { 'content-type': 'text/plain' });
  res.end('not found');
}

function streamForever(res: http.ServerResponse): void {
  const chunk = Buffer.from('<p>' + 'x'.repeat(16 * 1024) + '</p>\n');
  const pump = () => {
    while (!res.destroyed && res.write(chunk));
    if (!res.destroyed) res.once('drain', pump);
  };
  res.once('close', () => res.removeAllListeners('drain'));
  pump();
}

/** Every site of a test file, the port-80 listener they share, and the certificates they serve. */
export class ScanSites {
  private readonly sites = new Map<string, ScanSite>();
  private plain?: http.Server;
  private leafKey?: { privateKey: string; publicKey: string };

  async startPlainHttp(): Promise<void> {
    this.plain = http.createServer((req, res) => {
      const host = (req.headers.host ?? '').replace(/:\d+$/, '').toLowerCase();
      const site = this.sites.get(host);
      if (!site) return void req.socket.destroy();
      site.track('http', req, res);
      const mode = site.spec.plainHttp ?? 'redirect';
      if (mode === 'drop') return void req.socket.destroy();
      if (mode === 'page') return pageResponse(site, req, res);
      res.writeHead(301, { location: site.url('/') });
      res.end();
    });
    await new Promise<void>((resolve, reject) => {
      this.plain!.once('error', (err: NodeJS.ErrnoException) =>
        reject(
          new Error(
            `the security-scan tests serve plain HTTP on ${SCAN_ADDRESS}:${HTTP_PORT}, the port browsers and the scanner use, and could not bind it (${err.code}): ` +
              'run them as root, or allow unprivileged low ports (sysctl net.ipv4.ip_unprivileged_port_start=80), and free the port.',
          ),
        ),
      );
      this.plain!.listen(HTTP_PORT, SCAN_ADDRESS, () => resolve());
    });
  }

  async add(spec: SiteSpec): Promise<ScanSite> {
    const { key, cert } = await this.certificate(spec.hostname, spec.certificate ?? 'trusted');
    const server = https.createServer({
      key,
      cert,
      ...(spec.legacyTls ? { minVersion: 'TLSv1' as const, ciphers: 'DEFAULT:@SECLEVEL=0' } : {}),
      ...(spec.legacyTls === 'only' ? { maxVersion: 'TLSv1.1' as const } : {}),
    });
    const site = new ScanSite(spec, server);
    server.on('secureConnection', (socket: TLSSocket) => site.countHandshake(socket));
    server.on('tlsClientError', () => site.countHandshake());
    server.on('request', (req, res) => {
      site.track('https', req, res);
      pageResponse(site, req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, SCAN_ADDRESS, resolve));
    this.sites.set(spec.hostname, site);
    return site;
  }

  async close(): Promise<void> {
    const servers = [...[...this.sites.values()].map((s) => s.server), ...(this.plain ? [this.plain] : [])];
    for (const server of servers) server.closeAllConnections();
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => server.close(() => resolve()))));
  }

  /** A certificate for `hostname`; issued by the test CA unless self-signed; one RSA key for every leaf (fast). */
  private async certificate(hostname: string, kind: CertificateKind): Promise<{ key: string; cert: string }> {
    this.leafKey ??= generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicKeyEncoding: { type: 'spki', format: 'pem' },
      privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    });
    const now = Date.now();
    const named = typeof kind === 'object' ? kind.trustedFor : hostname;
    const expired = kind === 'expired' || kind === 'expired-self-signed';
    const [notBeforeDate, notAfterDate] = expired ? [new Date(now - 400 * DAY_MS), new Date(now - 30 * DAY_MS)] : [new Date(now - DAY_MS), new Date(now + 365 * DAY_MS)];
    const pems = await generate([{ name: 'commonName', value: named }], {
      keyType: 'rsa',
      algorithm: 'sha256',
      keyPair: this.leafKey,
      notBeforeDate,
      notAfterDate,
      extensions: [
        { name: 'basicConstraints', cA: false },
        { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
        { name: 'extKeyUsage', serverAuth: true },
        { name: 'subjectAltName', altNames: [{ type: 2, value: named }] },
      ],
      ...(kind === 'self-signed' || kind === 'expired-self-signed' ? {} : { ca: { key: readFileSync(FIXTURE_KEY, 'utf8'), cert: readFileSync(FIXTURE_CERT, 'utf8') } }),
    });
    return { key: pems.private, cert: pems.cert };
  }
}
