/**
 * Running operations and following jobs from the console, on the services of the public API
 * (modules/tools, modules/runs, modules/jobs): no rule is decided here a second time.
 *
 * Who may do what (the roles of service.ts):
 * - Reading the workspace's jobs, their snapshots and complete output: anyone who sees the
 *   workspace (its personal owner, or an organization's owner, admin or member).
 * - Estimating, running, cancelling and retrying: the workspace's owners and admins (403 FORBIDDEN
 *   for a member), as on the public API, where only they hold keys that work.
 *
 * Money and limits hang on API keys (budgets, allowed operations, the Idempotency-Key's scope, the
 * job's key), so a run or a retry from the console is made WITH one of the workspace's keys that
 * the user may change (service.ts changeableKey: it includes the workspace and the user manages
 * every workspace it includes). The key is checked exactly as if its secret had been presented on
 * the REST transport from the browser's address: revoked, expired (401), IP ranges, suspension,
 * transport, workspace and owner's role, scope (403), then the operation (403
 * FORBIDDEN_OPERATION) and everything admission checks. Only executionOrigin differs: `web`.
 *
 * Tenant rule: a workspace the user has no part in, a key not in the workspace and a job of
 * another workspace are all 404 NOT_FOUND.
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { keysetPage } from '../http/pagination.js';
import { userManagesWorkspace } from '../modules/accounts/service.js';
import { authorize, usableKey } from '../modules/auth/service.js';
import type { Scope } from '../modules/auth/scopes.js';
import type { AuthContext } from '../modules/auth/types.js';
import { cancelJob, getJob, retryJob } from '../modules/jobs/service.js';
import { toMetadata, type JobSnapshot } from '../modules/jobs/snapshot.js';
import { readOutput, type OutputPage } from '../modules/jobs/output.js';
import type { JobStatus } from '../modules/jobs/states.js';
import { startRun, type RunResponse } from '../modules/runs/service.js';
import { catalog, estimate } from '../modules/tools/service.js';
import { findOperation } from '../operations/registry.js';
import { changeableKey, visibleWorkspace } from './service.js';
import { pageJobsFiltered } from './jobs-store.js';

/** Who asks: the signed-in user and the browser's address (a key's IP ranges apply to it). */
export interface ConsoleActor {
  userId: string;
  ip: string | undefined;
}

/** Refuses a member: running and changing jobs is for the workspace's owners and admins. */
async function requireManager(deps: Deps, actor: ConsoleActor, workspaceId: string): Promise<void> {
  const { workspace } = await visibleWorkspace(deps, actor.userId, workspaceId);
  if (!(await userManagesWorkspace(deps.db, actor.userId, workspace))) {
    throw new AppError('FORBIDDEN', { message: 'Only owners and admins of this workspace run operations and cancel or retry its jobs; ask one of them.' });
  }
}

/**
 * The authorization a request presenting `keyId`'s secret over REST from the browser's address
 * would get for `scope` in this workspace, or that request's refusal.
 */
export async function actingAs(deps: Deps, actor: ConsoleActor, workspaceId: string, keyId: string, scope: Scope): Promise<AuthContext> {
  await requireManager(deps, actor, workspaceId);
  const key = usableKey(deps, await changeableKey(deps, actor.userId, workspaceId, keyId));
  if (key instanceof AppError) {
    throw new AppError(key.code, { message: `${key.message} Choose another key, or create one on the Keys page.`, details: { keyId } });
  }
  // The console's job pages read live jobs: a test key's runs are followed through the API.
  if (key.mode === 'test') {
    throw new AppError('INVALID_REQUEST', { message: 'The console runs with live keys; run with a test key through the API or was-client.', details: { keyId } });
  }
  return authorize(deps, key, { workspaceHeader: workspaceId, scope, transport: 'rest', ip: actor.ip });
}

/** The operations the key may run here, as GET /v1/tools lists them, with the media fields of each input. */
export async function consoleCatalog(deps: Deps, actor: ConsoleActor, workspaceId: string, keyId: string) {
  const auth = await actingAs(deps, actor, workspaceId, keyId, 'tools:run');
  return catalog(deps, auth.key).map((tool) => ({
    ...tool,
    operations: tool.operations.map((op) => ({ ...op, mediaFields: findOperation(op.operationId)?.mediaFields.map((f) => ({ ...f, kinds: [...f.kinds] })) ?? [] })),
  }));
}

export interface OperationRequest {
  keyId: string;
  operationId: string;
  input: Record<string, unknown>;
}

/** POST /v1/estimates' service for the key. */
export async function consoleEstimate(deps: Deps, actor: ConsoleActor, workspaceId: string, req: OperationRequest) {
  const auth = await actingAs(deps, actor, workspaceId, req.keyId, 'tools:run');
  return estimate(deps, auth.key, workspaceId, req.operationId, req.input);
}

/** POST /v1/runs' service for the key, with executionOrigin `web`. */
export async function consoleRun(deps: Deps, actor: ConsoleActor, workspaceId: string, req: OperationRequest, idempotencyKey: string | string[] | undefined): Promise<RunResponse> {
  const auth = await actingAs(deps, actor, workspaceId, req.keyId, 'tools:run');
  return startRun(deps, auth, { operationId: req.operationId, input: req.input, idempotencyKey, executionOrigin: 'web' });
}

export interface JobFilter {
  status?: JobStatus | undefined;
  operationId?: string | undefined;
}

/** The workspace's jobs, newest first, as GET /v1/jobs lists them, optionally of one status or operation. */
export async function consoleJobs(deps: Deps, actor: ConsoleActor, workspaceId: string, filter: JobFilter, page: { limit: number; cursor?: string | undefined }) {
  await visibleWorkspace(deps, actor.userId, workspaceId);
  const list = `console-jobs:${filter.status ?? ''}:${filter.operationId ?? ''}`;
  const result = await keysetPage(deps, list, workspaceId, page, (before, limit) => pageJobsFiltered(deps.db, workspaceId, filter, before, limit));
  return { items: result.items.map(toMetadata), nextCursor: result.nextCursor };
}

export async function consoleJob(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string): Promise<JobSnapshot> {
  await visibleWorkspace(deps, actor.userId, workspaceId);
  return getJob(deps, workspaceId, jobId);
}

/** One page of the complete output, read by the service of GET /v1/jobs/{id}/output. */
export async function consoleJobOutput(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, cursor: string | undefined): Promise<OutputPage> {
  await visibleWorkspace(deps, actor.userId, workspaceId);
  return readOutput(deps, workspaceId, jobId, cursor);
}

export async function consoleCancel(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string): Promise<JobSnapshot> {
  await requireManager(deps, actor, workspaceId);
  return cancelJob(deps, workspaceId, jobId);
}

/** POST /v1/jobs/{id}/retry's service for the key (scope jobs:write, a new Idempotency-Key). */
export async function consoleRetry(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, keyId: string, idempotencyKey: string | string[] | undefined) {
  const auth = await actingAs(deps, actor, workspaceId, keyId, 'jobs:write');
  return retryJob(deps, auth, jobId, idempotencyKey);
}
