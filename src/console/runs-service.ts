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
 *
 * Test mode (decisions.md "Test mode"): a run with a test key is the public API's run with that
 * key, so it is simulated, paid from the test balance and makes a test job (the key decides, as
 * on the API; a request naming a `mode` must use a key of that mode, 400 otherwise). The job
 * endpoints read and change the jobs of one mode (`mode`, live by default): the workspace's own
 * scope or its test twin (lib/livemode.ts scopeFor), passed to the same services GET /v1/jobs…
 * call with a key's scope, so a job of the other mode is 404 and a list holds one mode only. A
 * retry in a mode is made with a key of that mode.
 */
import type { Deps } from '../deps.js';
import { AppError } from '../http/errors.js';
import { keysetPage } from '../http/pagination.js';
import { scopeFor, type Mode } from '../lib/livemode.js';
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
export async function actingAs(deps: Deps, actor: ConsoleActor, workspaceId: string, keyId: string, scope: Scope, mode?: Mode): Promise<AuthContext> {
  await requireManager(deps, actor, workspaceId);
  const key = usableKey(deps, await changeableKey(deps, actor.userId, workspaceId, keyId));
  if (key instanceof AppError) {
    throw new AppError(key.code, { message: `${key.message} Choose another key, or create one on the Keys page.`, details: { keyId } });
  }
  // The console shows one mode at a time: a key of the other mode would act on objects it does not show.
  if (mode !== undefined && key.mode !== mode) {
    const message = mode === 'test'
      ? 'Test mode acts with test keys only: choose a test key (wask_test_…), or turn test mode off.'
      : 'A test key acts in test mode only: turn test mode on, or choose a live key.';
    throw new AppError('INVALID_REQUEST', { message, details: { keyId, mode, keyMode: key.mode } });
  }
  return authorize(deps, key, { workspaceHeader: workspaceId, scope, transport: 'rest', ip: actor.ip });
}

/** The scope the job endpoints work in: the visible workspace itself (live) or its test twin. */
async function jobScope(deps: Deps, actor: ConsoleActor, workspaceId: string, mode: Mode): Promise<string> {
  const { workspace } = await visibleWorkspace(deps, actor.userId, workspaceId);
  return scopeFor(workspace.id, mode);
}

/** The operations the key may run here, as GET /v1/tools lists them, with the media fields of each input. */
export async function consoleCatalog(deps: Deps, actor: ConsoleActor, workspaceId: string, keyId: string, mode?: Mode) {
  const auth = await actingAs(deps, actor, workspaceId, keyId, 'tools:run', mode);
  return catalog(deps, auth.key).map((tool) => ({
    ...tool,
    operations: tool.operations.map((op) => ({ ...op, mediaFields: findOperation(op.operationId)?.mediaFields.map((f) => ({ ...f, kinds: [...f.kinds] })) ?? [] })),
  }));
}

export interface OperationRequest {
  keyId: string;
  /** When given, the key must be of this mode (the console's test-mode switch). */
  mode?: Mode | undefined;
  operationId: string;
  input: Record<string, unknown>;
}

/** POST /v1/estimates' service for the key. */
export async function consoleEstimate(deps: Deps, actor: ConsoleActor, workspaceId: string, req: OperationRequest) {
  const auth = await actingAs(deps, actor, workspaceId, req.keyId, 'tools:run', req.mode);
  return estimate(deps, auth.key, auth.workspace.id, req.operationId, req.input);
}

/** POST /v1/runs' service for the key, with executionOrigin `web`. */
export async function consoleRun(deps: Deps, actor: ConsoleActor, workspaceId: string, req: OperationRequest, idempotencyKey: string | string[] | undefined): Promise<RunResponse> {
  const auth = await actingAs(deps, actor, workspaceId, req.keyId, 'tools:run', req.mode);
  return startRun(deps, auth, { operationId: req.operationId, input: req.input, idempotencyKey, executionOrigin: 'web' });
}

export interface JobFilter {
  status?: JobStatus | undefined;
  operationId?: string | undefined;
}

/**
 * The workspace's jobs of `mode`, newest first, as GET /v1/jobs lists them for a key of that
 * mode, optionally of one status or operation. A cursor is bound to the mode's scope.
 */
export async function consoleJobs(deps: Deps, actor: ConsoleActor, workspaceId: string, filter: JobFilter, page: { limit: number; cursor?: string | undefined }, mode: Mode = 'live') {
  const scope = await jobScope(deps, actor, workspaceId, mode);
  const list = `console-jobs:${filter.status ?? ''}:${filter.operationId ?? ''}`;
  const result = await keysetPage(deps, list, scope, page, (before, limit) => pageJobsFiltered(deps.db, scope, filter, before, limit));
  return { items: result.items.map(toMetadata), nextCursor: result.nextCursor };
}

export async function consoleJob(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, mode: Mode = 'live'): Promise<JobSnapshot> {
  return getJob(deps, await jobScope(deps, actor, workspaceId, mode), jobId);
}

/** One page of the complete output, read by the service of GET /v1/jobs/{id}/output. */
export async function consoleJobOutput(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, cursor: string | undefined, mode: Mode = 'live'): Promise<OutputPage> {
  return readOutput(deps, await jobScope(deps, actor, workspaceId, mode), jobId, cursor);
}

export async function consoleCancel(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, mode: Mode = 'live'): Promise<JobSnapshot> {
  await requireManager(deps, actor, workspaceId);
  return cancelJob(deps, await jobScope(deps, actor, workspaceId, mode), jobId);
}

/** POST /v1/jobs/{id}/retry's service for the key (scope jobs:write, a new Idempotency-Key), which must be of `mode`. */
export async function consoleRetry(deps: Deps, actor: ConsoleActor, workspaceId: string, jobId: string, keyId: string, idempotencyKey: string | string[] | undefined, mode: Mode = 'live') {
  const auth = await actingAs(deps, actor, workspaceId, keyId, 'jobs:write', mode);
  return retryJob(deps, auth, jobId, idempotencyKey);
}
