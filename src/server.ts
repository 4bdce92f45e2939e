/**
 * A running service process: API (HTTP), worker (background tasks) or both, per ROLE. SIGTERM
 * and SIGINT close gracefully: stop accepting, finish in-flight requests, stop workers, flush
 * counters, close the database, release the embedded lock.
 */
import { isPostgresUrl, resolveSecretKey, type Config } from './config.js';
import { buildApp } from './app.js';
import { createDeps } from './deps.js';
import { acquireServerLock } from './process-lock.js';
import { startMaintenance } from './worker/maintenance.js';

export async function runServer(config: Config): Promise<void> {
  const releaseLock = isPostgresUrl(config.databaseUrl) ? () => {} : acquireServerLock(config.dataDir);
  const deps = await createDeps({ config, secretKey: resolveSecretKey(config), processMetrics: true });
  const stops: (() => void)[] = [];
  const app = await buildApp(deps, { logRequests: true });
  if (config.role !== 'worker') {
    await app.listen({ port: config.port, host: config.host });
  } else {
    await app.ready();
  }
  if (config.role !== 'api') stops.push(startMaintenance(deps));
  deps.log.info({ role: config.role, database: config.databaseUrl.startsWith('sqlite:') ? 'sqlite' : 'postgres' }, 'service started');

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    deps.log.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      deps.log.error('graceful shutdown timed out; exiting');
      process.exit(1);
    }, 25_000);
    force.unref();
    try {
      for (const stop of stops) stop();
      await app.close();
      await deps.close();
    } finally {
      releaseLock();
    }
    process.exit(0);
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}
