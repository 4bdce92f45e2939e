/**
 * How an MCP tool call reaches its REST route: the MCP endpoint replays the call as an in-process
 * request (Fastify inject) to the route, so scopes, validation, usage points and errors are the
 * route's own. The request carries this header with a secret drawn at start-up; the auth hook
 * then checks the key for the `mcp` transport instead of `rest`. The secret never leaves the
 * process, so a client cannot claim the transport with the header.
 */
import { randomBytes } from 'node:crypto';
import { safeEqual } from '../lib/crypto.js';

export const MCP_INTERNAL_HEADER = 'x-mcp-internal';

const secret = randomBytes(32).toString('base64url');

export function internalMcpHeaders(): Record<string, string> {
  return { [MCP_INTERNAL_HEADER]: secret };
}

/** True for a request replayed by the MCP endpoint of this process. */
export function isInternalMcpRequest(value: string | string[] | undefined): boolean {
  return typeof value === 'string' && safeEqual(value, secret);
}
