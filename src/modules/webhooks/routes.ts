/** Webhook endpoints: create, list, update, revoke, rotate. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';

export async function webhookRoutes(_app: FastifyInstance, _deps: Deps): Promise<void> {}
