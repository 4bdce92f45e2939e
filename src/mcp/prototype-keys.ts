import type { FastifyRequest } from 'fastify';

/**
 * Requests to /mcp whose JSON body held prototype keys: read without them (endpoint.ts) and
 * marked here, so their tool calls get the refusal an argument outside the schema gets (routes.ts).
 */
export const prototypeKeys = new WeakSet<FastifyRequest>();
