/**
 * How the MCP endpoint reaches the REST routes: an in-process request (Fastify inject) with the
 * caller's own key, workspace and address, marked as MCP (internal.ts). Everything a REST request
 * meets (workspace, scope, IP ranges, usage points, validation, errors) it meets here too.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { internalMcpHeaders } from './internal.js';
import type { ReplayedAnswer } from './results.js';

export interface ReplayRequest {
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  workspaceId: string;
  query?: Record<string, string | string[]>;
  headers?: Record<string, string>;
  payload?: string | Buffer;
}

export async function replayRest(app: FastifyInstance, original: FastifyRequest, req: ReplayRequest): Promise<ReplayedAnswer> {
  const headers: Record<string, string> = {
    ...internalMcpHeaders(),
    authorization: String(original.headers.authorization),
    'x-service-workspace': req.workspaceId,
    ...req.headers,
  };
  const res = await app.inject({
    method: req.method,
    url: req.url,
    query: req.query ?? {},
    headers,
    ...(req.payload !== undefined ? { payload: req.payload } : {}),
    remoteAddress: original.ip,
  });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    body = { success: false, code: 'INTERNAL', message: 'The service answered without a JSON body.' };
  }
  const retryAfter = res.headers['retry-after'];
  return { statusCode: res.statusCode, body, ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}) };
}
