/**
 * A real HTTPS webhook receiver on loopback for the delivery tests: node:https with the test-only
 * certificate of test/fixtures/tls (trusted by the test process through NODE_EXTRA_CA_CERTS), which
 * records every request and answers as the test programs it: a status, a delay, an answer held
 * until the test releases it, a dropped connection or a redirect, one script entry per request
 * (then 200). It counts the requests it is answering at once (`peakInFlight`).
 *
 * `*.localhost` names resolve to 127.0.0.1 while `useLocalhostNames()` is active: webhook
 * hostnames must be DNS names with two labels or more (a single label such as `localhost` can
 * never be verified), and the egress guard resolves through node:dns.
 */
import dns from 'node:dns';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { after, before, mock } from 'node:test';

export const FIXTURE_CERT = resolve(import.meta.dirname, '../fixtures/tls/localhost.crt');
const FIXTURE_KEY = resolve(import.meta.dirname, '../fixtures/tls/localhost.key');

/** Fails with a clear message when the test process does not trust the fixture certificate. */
export function requireTestCa(): void {
  const configured = process.env.NODE_EXTRA_CA_CERTS;
  if (!configured || resolve(configured) !== FIXTURE_CERT) {
    throw new Error(
      `NODE_EXTRA_CA_CERTS must name ${FIXTURE_CERT} when the test process starts (scripts/run-tests.mjs sets it; ` +
        `running a file directly: NODE_EXTRA_CA_CERTS=test/fixtures/tls/localhost.crt node --import tsx --test …); got ${configured ?? 'nothing'}`,
    );
  }
}

/** Resolves every `*.localhost` name to `address` (127.0.0.1 unless given; other names as usual); returns the restore. */
export function useLocalhostNames(address = '127.0.0.1'): () => void {
  const original = dns.lookup;
  const m = mock.method(dns, 'lookup', (hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    if (typeof options === 'function') return (original as any).call(dns, hostname, options);
    if (!hostname.endsWith('.localhost')) return (original as any).call(dns, hostname, options, callback);
    const all = typeof options === 'object' && options !== null && (options as { all?: boolean }).all;
    process.nextTick(() => (all ? callback(null, [{ address, family: 4 }]) : callback(null, address, 4)));
  });
  return () => m.mock.restore();
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** Real time of arrival (epoch ms). */
  at: number;
}

export type Reply =
  /** `hold`: the answer waits until `release()` (or the receiver is reset or closed): a gate, not a delay. */
  | { status: number; delayMs?: number; hold?: boolean; location?: string; body?: string }
  | { drop: true };

export class HttpsReceiver {
  readonly requests: ReceivedRequest[] = [];
  private script: Reply[] = [];
  private waiters: { n: number; resolve: () => void }[] = [];
  private held: (() => void)[] = [];
  /** Requests received and not yet answered, and the most there were at once (concurrency, counted where it happens). */
  inFlight = 0;
  peakInFlight = 0;

  private readonly server: Server;

  private constructor() {
    this.server = createServer({ cert: readFileSync(FIXTURE_CERT), key: readFileSync(FIXTURE_KEY) });
    this.server.on('request', (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.inFlight++;
        this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
        let answered = false;
        const done = () => {
          if (answered) return;
          answered = true;
          this.inFlight--;
        };
        res.on('close', done);
        this.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
        for (const w of [...this.waiters]) {
          if (this.requests.length >= w.n) {
            this.waiters.splice(this.waiters.indexOf(w), 1);
            w.resolve();
          }
        }
        const reply = this.script.shift() ?? { status: 200 };
        if ('drop' in reply) {
          req.socket.destroy();
          return;
        }
        const send = () => {
          if (res.destroyed) return;
          res.writeHead(reply.status, { 'content-type': 'text/plain', ...(reply.location ? { location: reply.location } : {}) });
          res.end(reply.body ?? 'ok');
        };
        if (reply.hold) this.held.push(send);
        else if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
        else send();
      });
    });
  }

  static async start(): Promise<HttpsReceiver> {
    const receiver = new HttpsReceiver();
    await new Promise<void>((r) => receiver.server.listen(0, '127.0.0.1', r));
    return receiver;
  }

  /**
   * The receiver of one test file: requires the trusted test certificate, resolves `*.localhost`
   * to loopback, listens before the file's tests and closes after them.
   */
  static forThisFile(): HttpsReceiver {
    const receiver = new HttpsReceiver();
    let restoreDns = () => {};
    before(async () => {
      requireTestCa();
      restoreDns = useLocalhostNames();
      await new Promise<void>((r) => receiver.server.listen(0, '127.0.0.1', r));
    });
    after(async () => {
      await receiver.close();
      restoreDns();
    });
    return receiver;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** The receiver's URL under a `*.localhost` hostname. */
  url(hostname: string, path = '/hooks'): string {
    return `https://${hostname}:${this.port}${path}`;
  }

  /** The next requests' replies, in order (after them: 200). */
  reply(...replies: Reply[]): void {
    this.script.push(...replies);
  }

  /** Answers every held request now. */
  release(): void {
    const held = this.held;
    this.held = [];
    for (const send of held) send();
  }

  reset(): void {
    this.release();
    this.requests.length = 0;
    this.script = [];
    this.peakInFlight = this.inFlight;
  }

  /** Resolves once `n` requests in all have arrived. */
  async waitFor(n: number, timeoutMs = 5000): Promise<void> {
    if (this.requests.length >= n) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`receiver got ${this.requests.length} of ${n} requests`)), timeoutMs);
      this.waiters.push({ n, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  async close(): Promise<void> {
    this.release();
    this.server.closeAllConnections();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}
