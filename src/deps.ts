/**
 * Composition root: everything a service function may use, wired once. Tests build the same
 * object with a fake clock and a database of their choice.
 */
import type { Logger } from 'pino';
import type { Kysely } from 'kysely';
import { ConfigError, type Config } from './config.js';
import { openDatabase, migrateToLatest, type Capabilities, type DatabaseHandle } from './db/connect.js';
import type { Database } from './db/schema.js';
import { systemClock, type Clock } from './lib/clock.js';
import { Keyring } from './lib/crypto.js';
import { CursorCodec } from './lib/cursor.js';
import { createMetrics, type Metrics } from './metrics/index.js';
import { AuthCache } from './modules/auth/auth-cache.js';
import { readAuthEpoch } from './modules/auth/store.js';
import { AbuseTracker } from './modules/auth/suspension.js';
import { UsageMeter } from './modules/usage/meter.js';
import { lookup, resolveTxt } from 'node:dns/promises';
import { createEgress } from './egress/client.js';
import type { Egress } from './egress/types.js';
import type { BlobStore } from './modules/media/blob-store.js';
import { createBlobStore } from './modules/media/blob-store-factory.js';
import { PendingJobsSignal } from './modules/jobs/pending-signal.js';
import { JobChangeFeed } from './modules/jobs/changes.js';
import { DEFAULT_STREAM_SETTINGS, type StreamSettings } from './modules/jobs/stream-settings.js';
import { ProviderRegistry } from './providers/registry.js';
import { checkProviderAddresses } from './providers/providers-file.js';
import { probeEngines, type LocalEngines } from './providers/local/engines.js';
import { missingEngineProblems } from './providers/local/index.js';
import { OPERATION_IDS } from './operations/ids.js';
import { createServiceLogger } from './lib/logging.js';

/** Name resolution the service does itself (domain verification); replaceable in tests. */
export interface NetLookups {
  resolveTxt(name: string): Promise<string[][]>;
  /** Every address `hostname` resolves to (webhook destination checks); dns.lookup when absent. */
  lookupAddresses?(hostname: string): Promise<string[]>;
}

export interface Deps {
  config: Config;
  db: Kysely<Database>;
  caps: Capabilities;
  clock: Clock;
  log: Logger;
  keyring: Keyring;
  cursors: CursorCodec;
  metrics: Metrics;
  authCache: AuthCache;
  abuse: AbuseTracker;
  usage: UsageMeter;
  egress: Egress;
  /** Which provider runs each operation (the providers file), with its prices and steps. */
  providers: ProviderRegistry;
  net: NetLookups;
  /** Media bytes: local files under DATA_DIR or an S3-compatible bucket (MEDIA_STORE). */
  blobs: BlobStore;
  /**
   * Tells the job workers that a job became claimable: the other processes' through jobsPending,
   * and this process's own worker (worker/runner.ts adds it when the process runs one).
   */
  jobsWakeup: () => void;
  /** The cross-process "a job is waiting" signal (NOTIFY jobs_pending on a shared PostgreSQL server). */
  jobsPending: PendingJobsSignal;
  /** Job changes of every process (LISTEN/NOTIFY on PostgreSQL, in-process otherwise): wakes job streams. */
  jobChanges: JobChangeFeed;
  /** Timings of job streams (keep-alive, poll, slot heartbeat, re-authorization); tests shorten them. */
  streamSettings: StreamSettings;
  /** Stops background timers, flushes counters and closes the database. */
  close(): Promise<void>;
}

export interface CreateDepsOptions {
  config: Config;
  secretKey: string;
  /** An already opened database (tests); otherwise config.databaseUrl is opened. */
  database?: DatabaseHandle;
  clock?: Clock;
  log?: Logger;
  processMetrics?: boolean;
  migrate?: boolean;
  /** How often to poll the auth epoch; 0 disables polling (tests drive it). */
  epochPollMs?: number;
  net?: NetLookups;
  /** Embedded SQLite: checkpoint the WAL on a worker thread (server processes). */
  backgroundCheckpoint?: boolean;
}

/**
 * What the providers file needs of the machine, checked before anything opens: its providers'
 * host names lead to public addresses (unless the file allows private ones), and the programs of
 * the local engines it maps are installed. Returns the engines found.
 */
async function checkProvidersFile(options: CreateDepsOptions): Promise<LocalEngines> {
  const { config } = options;
  // Without a file, live keys get the local engines whose programs this machine has (machine-file.ts).
  if (!config.providers) return config.simulateLive ? {} : probeEngines({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, espeakPath: config.espeakPath });
  let engines: LocalEngines = {};
  const resolve = options.net?.lookupAddresses ?? (async (host: string) => (await lookup(host, { all: true, verbatim: true })).map((a) => a.address));
  const problems = await checkProviderAddresses(config.providers, resolve);
  if ([...config.providers.operations.values()].some((r) => r.engine)) {
    engines = await probeEngines({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, espeakPath: config.espeakPath });
    problems.push(...missingEngineProblems(config.providers, engines));
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return engines;
}

/** Keys revoked or changed by another process reach this one's cache: the auth epoch, polled. */
function pollAuthEpoch(db: Deps['db'], authCache: AuthCache, log: Deps['log'], pollMs: number): NodeJS.Timeout | undefined {
  if (pollMs <= 0) return undefined;
  const timer = setInterval(() => {
    readAuthEpoch(db).then(
      (epoch) => authCache.observeEpoch(epoch),
      (err: unknown) => log.error({ err }, 'auth epoch poll failed'),
    );
  }, pollMs);
  timer.unref();
  return timer;
}

export async function createDeps(options: CreateDepsOptions): Promise<Deps> {
  const { config } = options;
  const engines = await checkProvidersFile(options);
  const handle = options.database ?? (await openDatabase(config.databaseUrl, { backgroundCheckpoint: options.backgroundCheckpoint, synchronous: config.sqliteSynchronous }));
  if (options.migrate !== false) await migrateToLatest(handle.db);
  const log = options.log ?? createServiceLogger(config.logLevel).log;
  const clock = options.clock ?? systemClock;
  const keyring = new Keyring(options.secretKey);
  const authCache = new AuthCache();
  authCache.observeEpoch(await readAuthEpoch(handle.db));
  const usage = new UsageMeter(handle.db, clock, config.usageFlushMs, !handle.caps.singleWriter, (err) =>
    log.error({ err }, 'usage counter flush failed'),
  );
  usage.start();

  const epochTimer = pollAuthEpoch(handle.db, authCache, log, options.epochPollMs ?? 500);

  const egress = createEgress({ allowCidrs: config.egressAllowCidrs });
  const providers = new ProviderRegistry(config.providers, egress, log, { engines, simulatedDelayMs: config.simulatedDelayMs, simulateLive: config.simulateLive });
  const blobs = await createBlobStore({ config, keyring });
  const jobChanges = new JobChangeFeed({ db: handle.db, caps: handle.caps, log, listenUrl: handle.url });
  const jobsPending = new PendingJobsSignal({ db: handle.db, caps: handle.caps, log, listenUrl: handle.url });
  let closed = false;
  return {
    config,
    db: handle.db,
    caps: handle.caps,
    clock,
    log,
    keyring,
    cursors: new CursorCodec(keyring),
    metrics: createMetrics({
      processMetrics: options.processMetrics ?? false,
      sources: {
        db: handle.db,
        clock,
        poolStats: () => handle.poolStats(),
        operations: OPERATION_IDS,
        onDatabaseError: (err) => log.warn({ err }, 'metrics: reading the database gauges failed'),
      },
    }),
    authCache,
    abuse: new AbuseTracker(),
    usage,
    egress,
    providers,
    net: options.net ?? { resolveTxt },
    blobs,
    jobsWakeup: () => jobsPending.announce(),
    jobsPending,
    jobChanges,
    streamSettings: { ...DEFAULT_STREAM_SETTINGS },
    async close() {
      if (closed) return;
      closed = true;
      if (epochTimer) clearInterval(epochTimer);
      await usage.stop().catch((err: unknown) => log.error({ err }, 'final usage flush failed'));
      await jobChanges.close();
      await jobsPending.close();
      await providers.close();
      await egress.close();
      await blobs.close();
      await handle.close();
    },
  };
}
