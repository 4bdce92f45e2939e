/** Unauthenticated operational endpoints: /healthz, /readyz, /metrics. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../deps.js';
import { isMigrated } from '../db/connect.js';

export async function systemRoutes(app: FastifyInstance, deps: Deps): Promise<void> {
  const hidden = { hide: true } as const;
  app.get('/healthz', { schema: hidden, config: { meta: { code: 'HEALTH', message: 'ok', auth: 'none' } } }, async () => ({ status: 'ok' }));

  app.get('/readyz', { schema: hidden, config: { meta: { code: 'READY', message: 'ready', auth: 'none' } } }, async (_request, reply) => {
    try {
      if (await isMigrated(deps.db)) return { status: 'ready' };
      return reply.status(503).header('Retry-After', '5').send({ status: 'migrating' });
    } catch {
      return reply.status(503).header('Retry-After', '5').send({ status: 'database unreachable' });
    }
  });

  app.get('/metrics', { schema: hidden, config: { meta: { code: 'METRICS', message: 'metrics', auth: 'none' } } }, async (_request, reply) => {
    reply.header('Content-Type', deps.metrics.registry.contentType);
    return deps.metrics.registry.metrics();
  });
}
