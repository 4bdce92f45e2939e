/**
 * Test harness: `describeEachDatabase` runs a block of tests once per test database, each with
 * its own migrated database, fake clock, deps and Fastify app (not listening; use `inject`, or
 * `listen()` where a real socket matters).
 */
import { after, before, describe } from 'node:test';
import { lookup } from 'node:dns/promises';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { buildApp } from '../../src/app.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createDeps, type Deps, type NetLookups } from '../../src/deps.js';
import { FakeClock } from '../../src/lib/clock.js';
import { createTestDatabase, testDatabaseNames, type TestDatabase, type TestDatabaseName } from './databases.js';
import { startLiveBackend, type LiveBackend, type LiveBackendOptions } from './live-backend.js';

export const TEST_ADMIN_TOKEN = 'test-admin-token-0123456789';
export const TEST_SECRET_KEY = 'test-secret-key-0123456789abcdef0123456789abcdef';

export interface TestContext {
  dbName: TestDatabaseName;
  database: TestDatabase;
  deps: Deps;
  app: FastifyInstance;
  clock: FakeClock;
  config: Config;
  dataDir: string;
  /** Fake DNS TXT records for domain verification. */
  txtRecords: Map<string, string[][]>;
  /** Fake address records (webhook destination checks); other names resolve for real. */
  hostAddresses: Map<string, string[]>;
  /** The paid providers' fakes live keys run on (`{ live: true }`; support/live-backend.ts). */
  live?: LiveBackend;
}

export interface HarnessOptions {
  env?: Record<string, string>;
  /** The service's logger (default: silent, or TEST_LOG_LEVEL on stderr). */
  log?: Logger;
  /** Build the app with its request log lines, as a server process does. */
  logRequests?: boolean;
  /** Start time of the fake clock (epoch ms). */
  now?: number;
  /**
   * Real work for live keys: the fakes of support/live-backend.ts and a providers file mapping
   * operations onto them (`ctx.live`); its environment comes before `env`.
   */
  live?: boolean | LiveBackendOptions;
}

export function testConfig(dataDir: string, env: Record<string, string> = {}): Config {
  return loadConfig({
    DATABASE_URL: 'sqlite:unused.db',
    DATA_DIR: dataDir,
    ADMIN_TOKEN: TEST_ADMIN_TOKEN,
    SECRET_KEY: TEST_SECRET_KEY,
    LOG_LEVEL: 'silent',
    // Simulated work takes no time unless a test names a [sim:delay=…] (decisions.md's default
    // of 50 ms made thousands of jobs sleep; config.test.ts and the built-server tests keep it).
    SIMULATED_DELAY_MS: '0',
    // No SIMULATE_LIVE: live keys get what a production server gives them (docs/decisions.md
    // "Test mode"): simulated work runs with test keys (seed.ts `{ mode: 'test' }`), live work on a
    // paid provider's fake (`{ live: true }`, live-backend.ts), link.preview or an installed engine.
    // A test of the SIMULATE_LIVE rule itself passes `{ env: { SIMULATE_LIVE: 'true' } }`.
    ...env,
  });
}

export async function createTestContext(dbName: TestDatabaseName, options: HarnessOptions = {}): Promise<TestContext> {
  const database = await createTestDatabase(dbName);
  const dataDir = mkdtempSync(join(tmpdir(), 'was-data-'));
  const live = options.live ? await startLiveBackend(options.live === true ? {} : options.live) : undefined;
  const config = testConfig(dataDir, { ...live?.env, ...options.env });
  const clock = new FakeClock(options.now ?? Date.UTC(2026, 10, 18, 12, 0, 0));
  const txtRecords = new Map<string, string[][]>();
  const hostAddresses = new Map<string, string[]>();
  const net: NetLookups = {
    resolveTxt: async (name) => {
      const records = txtRecords.get(name);
      if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
      return records;
    },
    lookupAddresses: async (hostname) => hostAddresses.get(hostname) ?? (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address),
  };
  const deps = await createDeps({
    config,
    secretKey: TEST_SECRET_KEY,
    database: database.handle,
    clock,
    log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }, pino.destination(2)),
    epochPollMs: 0,
    net,
  });
  const app = await buildApp(deps, { logRequests: options.logRequests ?? false });
  await app.ready();
  return { dbName, database, deps, app, clock, config, dataDir, txtRecords, hostAddresses, ...(live ? { live } : {}) };
}

export async function disposeTestContext(ctx: TestContext): Promise<void> {
  await ctx.app.close();
  await ctx.deps.close();
  await ctx.database.dispose();
  await ctx.live?.close();
  rmSync(ctx.dataDir, { recursive: true, force: true });
}

/** Runs `body` once per test database (or per one of `databases`); `get()` returns that database's context inside tests. */
/**
 * The harness options of a suite whose simulated work runs with test keys (seedTenant
 * `{ mode: 'test' }`), SIMULATE_LIVE off: so a live key in it gets exactly what a production
 * server gives (no simulated work), and a suite that ran simulated work on a live key would fail.
 * SIMULATE_LIVE is off by default (testConfig); this names it, so that such a suite stays right
 * whatever the default.
 */
export function testKeySuite(options: HarnessOptions = {}): HarnessOptions {
  return { ...options, env: { ...options.env, SIMULATE_LIVE: 'false' } };
}

export function describeEachDatabase(title: string, body: (get: () => TestContext) => void, options: HarnessOptions = {}, databases: readonly TestDatabaseName[] = testDatabaseNames()): void {
  for (const dbName of databases) {
    describe(`${title} [${dbName}]`, () => {
      let ctx: TestContext | undefined;
      before(async () => {
        ctx = await createTestContext(dbName, options);
      });
      after(async () => {
        if (ctx) await disposeTestContext(ctx);
      });
      body(() => {
        if (!ctx) throw new Error('test context not ready');
        return ctx;
      });
    });
  }
}

export interface CallOptions {
  secret?: string;
  workspaceId?: string;
  headers?: Record<string, string>;
  query?: Record<string, string>;
  body?: unknown;
  remoteAddress?: string;
}

/** A request to the public API with a key and workspace header. */
export async function call(ctx: TestContext, method: InjectOptions['method'], url: string, o: CallOptions = {}): Promise<LightMyRequestResponse> {
  const headers: Record<string, string> = { ...o.headers };
  if (o.secret !== undefined) headers.authorization = `Bearer ${o.secret}`;
  if (o.workspaceId !== undefined) headers['x-service-workspace'] = o.workspaceId;
  return ctx.app.inject({
    method,
    url,
    headers,
    ...(o.query ? { query: o.query } : {}),
    ...(o.body !== undefined ? { payload: o.body as object } : {}),
    ...(o.remoteAddress ? { remoteAddress: o.remoteAddress } : {}),
  });
}

/** A request to the admin API. */
export async function admin(ctx: TestContext, url: string, body?: unknown, token = TEST_ADMIN_TOKEN): Promise<LightMyRequestResponse> {
  return ctx.app.inject({
    method: 'POST',
    url,
    headers: { authorization: `Bearer ${token}` },
    ...(body !== undefined ? { payload: body as object } : {}),
  });
}
