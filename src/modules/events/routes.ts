/** GET /v1/events (the workspace event feed). */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';

export async function eventRoutes(_app: FastifyInstance, _deps: Deps): Promise<void> {}
