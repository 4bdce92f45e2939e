/**
 * What a key may do over MCP, checked as REST checks it: the key itself (valid, its IP ranges,
 * not suspended, allowed the mcp transport) and the workspaces whose jobs it may read, used by
 * the POST handler, the standing stream's open and its periodic re-authorization.
 */
import type { FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { queryPairs } from '../http/auth-hook.js';
import { AppError } from '../http/errors.js';
import { checkAuthorization, checkKeyAccess, checkPresentedKey, recordAuthorizationFailure } from '../modules/auth/service.js';
import type { ApiKey } from '../modules/auth/types.js';

/** The key of the MCP request: valid, and allowed the mcp transport. */
export async function authenticate(deps: Deps, request: FastifyRequest): Promise<ApiKey | AppError> {
  const key = await checkPresentedKey(deps, {
    authorization: request.headers.authorization,
    query: queryPairs(request.url),
  });
  if (key instanceof AppError) return key;
  // IP ranges, suspension and transport, as REST checks them before any workspace.
  const refusal = checkKeyAccess(deps, key, { ip: request.ip, transport: 'mcp' });
  if (refusal) return (await recordAuthorizationFailure(deps, key, refusal)) ?? refusal;
  return key;
}

/**
 * The workspaces among `candidates` whose jobs the key may read over MCP (jobs:read, the
 * workspace still in the key and managed by its owner), or the refusal of the first one when
 * none is: a key without jobs:read is FORBIDDEN_SCOPE.
 */
export async function readableWorkspaces(deps: Deps, key: ApiKey, candidates: readonly string[], ip: string | undefined): Promise<string[] | AppError> {
  const allowed: string[] = [];
  let first: AppError | undefined;
  for (const workspaceId of candidates) {
    const result = await checkAuthorization(deps, key, { workspaceHeader: workspaceId, scope: 'jobs:read', transport: 'mcp', ip });
    if (result instanceof AppError) first ??= result;
    else allowed.push(result.workspace.id);
  }
  if (allowed.length === 0) return first ?? new AppError('FORBIDDEN_WORKSPACE');
  return allowed;
}
