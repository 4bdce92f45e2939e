/** GET /v1/jobs/{jobId}/stream (server-sent job updates, Pro plan). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';

export async function streamRoutes(_app: FastifyInstance, _deps: Deps): Promise<void> {}
