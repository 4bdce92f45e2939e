/**
 * A running service process: API (HTTP), worker (background tasks) or both, per ROLE.
 *
 * Start-up: take the embedded-database lock (SQLite only; waits up to LOCK_WAIT_MS for a live holder), open and migrate the database, build
 * the app, listen (unless ROLE=worker), start the workers (unless ROLE=api): the job worker, the
 * webhook delivery worker and housekeeping. SIGTERM and SIGINT close gracefully: stop accepting
 * connections and finish in-flight requests (new requests on open keep-alive connections get 503 UNAVAILABLE), stop the
 * workers (running jobs get a grace period, then are aborted and their leases expire for another
 * process to recover; deliveries in flight are handed back to the queue), flush the usage counters, close the database, release the lock, exit 0.
 * A close that takes longer than SHUTDOWN_TIMEOUT_MS exits 1.
 */
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { resolveSecretKey, sqliteFile, type Config } from './config.js';
import { buildApp } from './app.js';
import { createDeps, type Deps } from './deps.js';
import { OPERATIONS } from './operations/registry.js';
import { probeEngines } from './providers/local/engines.js';
import { launcher } from './providers/local/launcher.js';
import { acquireServerLock } from './process-lock.js';
import { startWorkers } from './worker/runner.js';
import { startMetricsListener, type MetricsListener } from './metrics/listener.js';
import { flushLogs } from './lib/logging.js';

export const SHUTDOWN_TIMEOUT_MS = 25_000;

export async function runServer(config: Config): Promise<void> {
  // Signals are caught from the first moment: one that arrives during start-up is acted on once
  // the process is up (so the lock is always released); a second one while closing exits at once.
  const signals: { requested?: string; shutdown?: (signal: string) => Promise<void>; closing: boolean } = { closing: false };
  const onSignal = (signal: NodeJS.Signals) => {
    if (signals.closing) process.exit(signal === 'SIGINT' ? 130 : 143);
    else if (signals.shutdown) void signals.shutdown(signal);
    else signals.requested = signal;
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);

  const databaseFile = sqliteFile(config.databaseUrl);
  const releaseLock = databaseFile ? await takeServerLock(config, databaseFile) : () => {};
  let deps;
  try {
    deps = await createDeps({ config, secretKey: resolveSecretKey(config), processMetrics: true, backgroundCheckpoint: true });
  } catch (err) {
    releaseLock();
    throw err;
  }
  const log = deps.log;
  // A fatal error (an exception nothing caught) is logged and every log line written before the
  // process exits 1; without this handler Node would exit at once, before the asynchronous log
  // destination wrote what it holds.
  process.on('uncaughtException', (err, origin) => {
    process.stderr.write(`fatal: ${err?.stack ?? String(err)}\n`);
    log.fatal({ err, origin }, 'fatal error; exiting');
    void flushLogs(log).finally(() => process.exit(1));
  });
  const serving = await startServing(config, deps, releaseLock);
  const stops: (() => Promise<void>)[] = [];
  // The job worker, the webhook delivery worker and housekeeping (worker/runner.ts).
  if (config.role !== 'api') stops.push(startWorkers(deps));
  // A worker that runs local engine programs starts their launcher now, not at its first job.
  if (config.role !== 'api' && Object.keys(deps.providers.engines).length > 0) launcher.prepare();
  // Worker timers are unref'd (they must not hold a closing process open), so a process without
  // an HTTP listener needs something that keeps it running until it is told to stop.
  const keepAlive = serving.address ? undefined : setInterval(() => {}, 1 << 30);
  log.info(
    {
      role: config.role,
      database: databaseFile ? 'sqlite' : 'postgres',
      ...(serving.address ? { host: serving.address.address, port: serving.address.port } : { listening: false }),
      ...(serving.metricsListener ? { metricsPort: serving.metricsListener.address.port } : {}),
    },
    'service started',
  );
  const stopEngineProbe = logProviders(deps);

  signals.shutdown = async (signal: string) => {
    if (signals.closing) return;
    signals.closing = true;
    // A probe still in flight must not log after "stopped".
    stopEngineProbe();
    if (keepAlive) clearInterval(keepAlive);
    await shutDown(deps, serving, stops, releaseLock, signal);
  };
  if (signals.requested) void signals.shutdown(signals.requested);
}

/**
 * The embedded database's lock (process-lock.ts), waiting up to LOCK_WAIT_MS for a live holder.
 * A signal while waiting ends the wait: the process never started, so it exits.
 */
async function takeServerLock(config: Config, databaseFile: string): Promise<() => void> {
  const lockWait = new AbortController();
  const signalDuringLockWait = (signal: NodeJS.Signals) => lockWait.abort(signal);
  process.once('SIGTERM', signalDuringLockWait);
  process.once('SIGINT', signalDuringLockWait);
  const announceWait = (pid: number | undefined) =>
    process.stderr.write(`Waiting up to ${config.lockWaitMs} ms for the embedded database's lock, held by ${pid === undefined ? 'another process' : `pid ${pid}`}.\n`);
  try {
    return await acquireServerLock(databaseFile, { waitMs: config.lockWaitMs, signal: lockWait.signal, onWait: announceWait });
  } catch (err) {
    if (lockWait.signal.aborted) process.exit(lockWait.signal.reason === 'SIGINT' ? 130 : 143);
    throw err;
  } finally {
    process.off('SIGTERM', signalDuringLockWait);
    process.off('SIGINT', signalDuringLockWait);
  }
}

interface Serving {
  app: FastifyInstance;
  address: AddressInfo | undefined;
  metricsListener: MetricsListener | undefined;
}

/** The app, listening unless ROLE=worker, and /metrics on METRICS_PORT; on a failure everything opened is closed. */
async function startServing(config: Config, deps: Deps, releaseLock: () => void): Promise<Serving> {
  let app: FastifyInstance | undefined;
  try {
    app = await buildApp(deps, { logRequests: true });
    let address: AddressInfo | undefined;
    if (config.role !== 'worker') {
      await app.listen({ port: config.port, host: config.host });
      address = app.server.address() as AddressInfo;
    } else {
      await app.ready();
    }
    // METRICS_PORT: /metrics on a port of its own (the only way to scrape a ROLE=worker process).
    const metricsListener =
      config.metricsPort === undefined
        ? undefined
        : await startMetricsListener(deps.metrics, config.host, config.metricsPort, (err) => deps.log.error({ err }, 'metrics scrape failed'));
    return { app, address, metricsListener };
  } catch (err) {
    await app?.close().catch(() => {});
    await deps.close().catch(() => {});
    releaseLock();
    throw err;
  }
}

/**
 * The graceful close of a signal: the listener and in-flight requests, the workers, /metrics, the
 * database; the lock released; every log line flushed; exit 0 (1 after an error, or when it takes
 * longer than SHUTDOWN_TIMEOUT_MS).
 */
async function shutDown(deps: Deps, serving: Serving, stops: (() => Promise<void>)[], releaseLock: () => void, signal: string): Promise<void> {
  const log = deps.log;
  log.info({ signal }, 'shutting down');
  const force = setTimeout(() => {
    log.error('graceful shutdown timed out; exiting');
    releaseLock();
    process.exit(1);
  }, SHUTDOWN_TIMEOUT_MS);
  force.unref();
  let code = 0;
  try {
    await serving.app.close();
    await Promise.all(stops.map((stop) => stop()));
    await serving.metricsListener?.close();
    await deps.close();
  } catch (err) {
    log.error({ err }, 'error during shutdown');
    code = 1;
  } finally {
    releaseLock();
  }
  log.info({ code }, 'stopped');
  // Log lines are written asynchronously (lib/logging.ts): hand every one to the kernel first.
  await flushLogs(log);
  process.exit(code);
}

/** A moment after start-up: the probe's child processes must not compete with it (issue 19). */
const ENGINE_PROBE_DELAY_MS = 2000;

function logEngines(deps: Deps, engines: Awaited<ReturnType<typeof probeEngines>>): void {
  deps.log.info(
    { engines: Object.fromEntries(Object.entries(engines).map(([name, info]) => [name, `${info.path}: ${info.version}`])) },
    `local engine programs found: ${Object.keys(engines).join(', ') || 'none'} (ffmpeg and espeak-ng come from the Debian packages ffmpeg and espeak-ng)`,
  );
}

/**
 * One line on what does the paid work: a warning when nothing real does, else the operation map;
 * and one on the local engine programs. Returns what a stop calls so that no line of the probe
 * comes after the stop's last one.
 */
function logProviders(deps: Deps): () => void {
  const { providers, log, config } = deps;
  let stopProbe = () => {};
  // Which local engines this machine could run: probed at start-up when the file maps one (and
  // known now), else probed for this log line alone, in the background after start-up.
  if (Object.keys(providers.engines).length > 0) {
    logEngines(deps, providers.engines);
  } else {
    let wanted = true;
    const timer = setTimeout(() => {
      probeEngines({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, espeakPath: config.espeakPath })
        .then((engines) => wanted && logEngines(deps, engines))
        .catch((err: unknown) => wanted && log.warn({ err }, 'could not probe the local engine programs'));
    }, ENGINE_PROBE_DELAY_MS);
    timer.unref();
    stopProbe = () => {
      wanted = false;
      clearTimeout(timer);
    };
  }
  if (providers.allSimulated) {
    log.warn('SIMULATE_LIVE=true and no PROVIDERS_FILE: live keys run every paid operation except link.preview on the simulated provider (no real work, still charged); for staging servers and test rigs, never production');
    return stopProbe;
  }
  if (config.simulateLive) {
    log.warn('SIMULATE_LIVE=true: live keys run the operations the providers file leaves out on the simulated provider (no real work, still charged); for staging servers and test rigs, never production');
  }
  const routes: Record<string, string> = {};
  const live: string[] = [];
  for (const op of OPERATIONS) {
    const route = providers.route(op.id, 'live');
    routes[op.id] = route ? `${route.providerName}${route.model ? ` (${route.model})` : route.spec?.engine ? ` (${route.spec.engine})` : ''}` : 'not offered';
    if (route) live.push(op.id);
  }
  // Which operations live keys can run (test keys run all of them, simulated).
  log.info({ providersFile: deps.config.providersFile ?? null, simulated: providers.file?.simulated ?? null, live, operations: routes }, 'providers');
  return stopProbe;
}
