/**
 * Unauthenticated operational endpoints (decisions.md section 4): /healthz (the process runs),
 * /readyz (the database answers and is migrated; 503 UNAVAILABLE with Retry-After otherwise)
 * and /metrics (Prometheus text). Hidden from the OpenAPI document.
 */
import { sql } from 'kysely';
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { isMigrated } from '../db/connect.js';
import { ok } from './envelope.js';
import { AppError } from './errors.js';

/** How long /readyz waits for the database before calling it unreachable. */
export const READY_TIMEOUT_MS = 2000;
export const READY_RETRY_AFTER_S = 5;

type Readiness = 'ready' | 'migrating' | 'database unreachable';

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

export async function systemRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const hidden = { hide: true } as const;
  // Migrations never go backwards, so once seen complete only reachability is checked.
  let migrated = false;

  async function readiness(): Promise<Readiness> {
    try {
      return await withTimeout(
        (async (): Promise<Readiness> => {
          if (migrated) {
            await sql`select 1`.execute(deps.db);
            return 'ready';
          }
          migrated = await isMigrated(deps.db);
          return migrated ? 'ready' : 'migrating';
        })(),
        READY_TIMEOUT_MS,
      );
    } catch (err) {
      deps.log.warn({ err }, 'readiness check: database unreachable');
      return 'database unreachable';
    }
  }

  app.get('/healthz', { schema: hidden, config: { meta: { code: 'HEALTH', message: 'The process is running.', auth: 'none' } } }, async (request) =>
    ok(request, { status: 'ok' }),
  );

  app.get('/readyz', { schema: hidden, config: { meta: { code: 'READY', message: 'Ready to serve requests.', auth: 'none' } } }, async (request) => {
    const status = await readiness();
    if (status === 'ready') return ok(request, { status });
    throw new AppError('UNAVAILABLE', {
      message: status === 'migrating' ? 'Database migrations are not applied yet.' : 'The database is unreachable.',
      retryAfter: READY_RETRY_AFTER_S,
      details: { status },
    });
  });

  app.get('/metrics', { schema: hidden, config: { meta: { code: 'METRICS', message: 'metrics', auth: 'none' } } }, async (_request, reply) => {
    reply.header('Content-Type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
