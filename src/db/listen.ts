/**
 * One dedicated PostgreSQL connection per process that LISTENs on a channel (a plain pg.Client,
 * not a pool client: a LISTEN session must outlive any query, and a pool would hand it back or
 * recycle it). NOTIFY is delivered at commit, so a notification always names a change that other
 * sessions can already read.
 *
 * The connection reconnects on error with capped exponential backoff and jitter. Notifications
 * sent while it was down are lost, so `onReconnect` tells the owner to re-read everything it
 * cares about (streams re-read their job's versions after the last one they sent).
 */
import type pg from 'pg';
import type { Logger } from 'pino';

export interface PgListenerOptions {
  connectionString: string;
  channel: string;
  log: Logger;
  onNotify(payload: string): void;
  /** Called after every (re)established LISTEN except the first: notifications may have been missed. */
  onReconnect(): void;
  /** Backoff of reconnection attempts (ms); defaults 250 → 10 000. */
  backoffBaseMs?: number;
  backoffCapMs?: number;
}

const CHANNEL_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export class PgListener {
  private client: pg.Client | undefined;
  private closed = false;
  private attempt = 0;
  private connectedOnce = false;
  private retryTimer: NodeJS.Timeout | undefined;
  private ready: Promise<void> | undefined;
  private markReady: (() => void) | undefined;

  constructor(private readonly options: PgListenerOptions) {
    if (!CHANNEL_RE.test(options.channel)) throw new Error(`invalid LISTEN channel name: ${options.channel}`);
  }

  /** Starts listening (idempotent); resolves once LISTEN is active, or on close. */
  start(): Promise<void> {
    if (!this.ready) {
      this.ready = new Promise<void>((resolve) => (this.markReady = resolve));
      void this.connect();
    }
    return this.ready;
  }

  /** True while a LISTEN session is established. */
  get listening(): boolean {
    return this.client !== undefined;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    // The driver loads on first use: a process on SQLite never needs it.
    const { default: driver } = await import('pg');
    if (this.closed) return;
    const client = new driver.Client({ connectionString: this.options.connectionString });
    let failed = false;
    const fail = (err: Error) => {
      if (failed) return;
      failed = true;
      if (this.client === client) this.client = undefined;
      client.removeAllListeners('notification');
      client.end().catch(() => {});
      if (this.closed) return;
      this.options.log.warn({ err: { message: err.message }, channel: this.options.channel }, 'LISTEN connection lost; reconnecting');
      this.scheduleReconnect();
    };
    client.on('error', fail);
    client.on('end', () => fail(new Error('connection ended')));
    client.on('notification', (msg) => {
      if (msg.channel === this.options.channel && msg.payload !== undefined) this.options.onNotify(msg.payload);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.options.channel}`);
    } catch (err) {
      fail(err as Error);
      return;
    }
    if (this.closed || failed) {
      client.end().catch(() => {});
      return;
    }
    this.client = client;
    this.attempt = 0;
    if (this.connectedOnce) this.options.onReconnect();
    this.connectedOnce = true;
    this.markReady?.();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const base = this.options.backoffBaseMs ?? 250;
    const cap = this.options.backoffCapMs ?? 10_000;
    const delay = Math.min(cap, base * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.markReady?.();
    const client = this.client;
    this.client = undefined;
    if (client) {
      client.removeAllListeners();
      client.on('error', () => {});
      await client.end().catch(() => {});
    }
  }
}
