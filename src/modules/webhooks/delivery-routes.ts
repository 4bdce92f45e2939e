/** Webhook delivery history and replay. */
import type { FastifyInstance } from 'fastify';
import type { Deps } from '../../deps.js';

export async function deliveryRoutes(_app: FastifyInstance, _deps: Deps): Promise<void> {}
