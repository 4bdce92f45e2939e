/**
 * Tool calls, MCP tasks (protocol revision 2025-11-25) and progress, on the stateless endpoint.
 *
 * A task is a job: the task id is the job id, so tasks/get, tasks/result and tasks/cancel are
 * answered from the database by whichever process receives them, with nothing kept in memory
 * between requests. Each reads or cancels the job through its REST route (GET /v1/jobs/{id},
 * POST /v1/jobs/{id}/cancel) in the job's workspace, so the key's workspaces, scopes and usage
 * points apply as on REST; a job the key may not see is "not found", like a job that does not
 * exist.
 *
 * - tools/call with `task` on a run tool (or a retry): the run is admitted as usual; a queued run
 *   answers with its task (working), a synchronous one with a task that is already terminal. A
 *   refused run creates no job and so no task: it is a JSON-RPC error carrying the REST error
 *   body in `data`. Without `task` a call behaves as it always has (a queued run returns the job).
 * - tasks/result waits until the job ends (polling the database), sending
 *   notifications/tasks/status on every status change and, with a progressToken, progress from
 *   the job's percentage; then it answers the job snapshot as the tool result (isError for a
 *   failed or cancelled job).
 * - A long synchronous tools/call with a progressToken sends progress every second until its
 *   answer. Notifications need an SSE response: the endpoint answers with a stream exactly when
 *   the body holds tasks/result or a tools/call with a progressToken (routes.ts), JSON otherwise.
 */
import { publicWorkspaceId } from '../lib/livemode.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  McpError,
  RELATED_TASK_META_KEY,
  type CallToolResult,
  type ServerNotification,
  type Task,
} from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps.js';
import { getJob, jobWorkspaceId } from '../modules/jobs/service.js';
import type { JobMetadata, JobSnapshot } from '../modules/jobs/snapshot.js';
import type { ApiKey } from '../modules/auth/types.js';
import { replayRest } from './replay.js';
import { toolResult, type ReplayedAnswer } from './results.js';
import type { ReplyText } from './reply-text.js';

/** How often a waiting tasks/result reads the job, and how often a long call reports progress. */
export const TASK_POLL_MS = 250;
export const PROGRESS_EVERY_MS = 1000;
/**
 * The longest one tasks/result waits (a job can wait in a queue for hours): then it answers a
 * JSON-RPC error holding the task, and the client asks again.
 */
export const MAX_RESULT_WAIT_MS = 10 * 60_000;
/** What a task client is told to wait between tasks/get. */
const POLL_INTERVAL_MS = 1000;

type Notify = (notification: ServerNotification) => Promise<void>;
type ProgressToken = string | number;

function taskStatus(status: string): Task['status'] {
  if (status === 'completed' || status === 'failed' || status === 'cancelled') return status;
  return 'working';
}

function isTerminalJob(status: string): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** The task view of a job. Jobs are kept, so a task's result stays available (ttl null). */
export function taskOf(job: Pick<JobSnapshot, 'id' | 'status' | 'errorCode' | 'createdAt' | 'startedAt' | 'completedAt' | 'progress'>): Task {
  const message =
    job.status === 'failed'
      ? `Job failed: ${job.errorCode ?? 'unknown error'}`
      : job.status === 'pending'
        ? 'Job waiting in the queue'
        : job.status === 'processing'
          ? `Job running (${job.progress.percentage}%)`
          : `Job ${job.status}`;
  return {
    taskId: job.id,
    status: taskStatus(job.status),
    statusMessage: message,
    createdAt: job.createdAt,
    lastUpdatedAt: job.completedAt ?? job.startedAt ?? job.createdAt,
    ttl: null,
    pollInterval: POLL_INTERVAL_MS,
  };
}

function notFound(taskId: string): McpError {
  return new McpError(ErrorCode.InvalidParams, `Task not found: ${taskId}`);
}

/** A REST refusal of a task operation as a JSON-RPC error (the body, status and Retry-After in data). */
function refusalError(what: string, answer: ReplayedAnswer): McpError {
  const body = answer.body;
  const code = answer.statusCode === 400 ? ErrorCode.InvalidParams : -32000;
  return new McpError(code, `${what}: ${String(body.code)}: ${String(body.message)}`, {
    httpStatus: answer.statusCode,
    ...(answer.retryAfter !== undefined ? { retryAfter: answer.retryAfter } : {}),
    body: toolResult(answer).content[0],
  });
}

/**
 * The job of a task as the key may read it (GET /v1/jobs/{id} in the job's workspace): the
 * answer, or "not found" for a job missing or outside the key's workspaces.
 */
async function readTaskJob(deps: Deps, app: FastifyInstance, original: FastifyRequest, taskId: string): Promise<{ workspaceId: string; answer: ReplayedAnswer }> {
  const workspaceId = await jobWorkspaceId(deps, taskId);
  if (!workspaceId) throw notFound(taskId);
  // The header names the workspace the client knows: a test job's row holds its test twin (lib/livemode.ts).
  const answer = await replayRest(app, original, { method: 'GET', url: `/v1/jobs/${taskId}`, workspaceId: publicWorkspaceId(workspaceId) });
  if (answer.statusCode === 404 || (answer.statusCode === 403 && answer.body.code === 'FORBIDDEN_WORKSPACE')) throw notFound(taskId);
  if (answer.statusCode >= 400) throw refusalError('tasks', answer);
  return { workspaceId, answer };
}

function snapshotOf(answer: ReplayedAnswer): JobSnapshot {
  return (answer.body as { data: JobSnapshot }).data;
}

/** The task answer of a task-augmented tool call: the task of the job the run made, or the run's refusal. */
export async function taskForCall(deps: Deps, name: string, outcome: { early?: CallToolResult; answer?: ReplayedAnswer }): Promise<{ task: Task }> {
  const answer = outcome.answer;
  if (!answer) {
    const first = outcome.early?.content[0];
    throw new McpError(ErrorCode.InvalidParams, `${name}: ${first?.type === 'text' ? first.text : 'refused'}`);
  }
  if (answer.statusCode >= 400) throw refusalError(name, answer);
  const jobId = (answer.body.data as { jobId?: unknown } | undefined)?.jobId;
  if (typeof jobId !== 'string') throw new McpError(ErrorCode.InvalidParams, `${name} made no job to follow as a task.`);
  const workspaceId = (await jobWorkspaceId(deps, jobId))!;
  return { task: taskOf(await getJob(deps, workspaceId, jobId)) };
}

/**
 * Progress of a tool call while `work` runs (when the client asked for it with a progressToken).
 * A call that follows a job (a synchronous run: `job()` names it once admitted) reports the job's
 * own percentage, read from the database every TASK_POLL_MS and sent when it grows (total 100).
 * While nothing grows, a notification every PROGRESS_EVERY_MS says the call is alive; MCP wants
 * each progress value above the last, so such a beat adds 0.001 to the last value sent (at most
 * a few hundredths over a synchronous run's 20 s bound). A run that streams its reply
 * (chat.generate: `text`) sends, whenever more text arrived, a notification whose message is the
 * reply received so far (progress and total as a beat's); the last notification is the call's
 * status line again. Every notification is sent before the answer: the loop is stopped and
 * awaited first, then the rest of the text and the status are sent.
 */
export async function withProgress<T>(deps: Deps, token: ProgressToken | undefined, notify: Notify, what: string, work: Promise<T>, job?: () => string | undefined, text?: ReplyText): Promise<T> {
  if (token === undefined) return work;
  const started = Date.now();
  const stop = new AbortController();
  let sent = -1;
  let sentAt = 0;
  let percent = 0;
  const send = async (message: string) => {
    const grew = percent > sent;
    sent = grew ? percent : Math.round((sent + 0.001) * 1000) / 1000;
    sentAt = Date.now();
    await notify({ method: 'notifications/progress', params: { progressToken: token, progress: sent, total: 100, message } }).catch(() => undefined);
  };
  const status = () => `${what}: ${job?.() === undefined ? 'running' : `${percent}%`} after ${Math.round((Date.now() - started) / 1000)} s`;
  const loop = (async () => {
    while (!stop.signal.aborted) {
      const jobId = job?.();
      if (jobId !== undefined) {
        const row = await deps.db.selectFrom('jobs').select('progress').where('id', '=', jobId).executeTakeFirst().catch(() => undefined);
        if (row) percent = Math.max(percent, Math.round(Number(row.progress) * 100) / 100);
      }
      if (stop.signal.aborted) break;
      const reply = text?.takeNew();
      if (reply !== undefined) await send(reply);
      else if (percent > sent || sent < 0 || Date.now() - sentAt >= PROGRESS_EVERY_MS) await send(status());
      await sleep(TASK_POLL_MS, stop.signal);
    }
  })();
  try {
    return await work;
  } finally {
    stop.abort();
    await loop;
    const reply = text?.takeNew();
    if (reply !== undefined) await send(reply);
    if (text?.sent) await send(status());
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}

/** Tasks per tasks/list page (one GET /v1/jobs page of one workspace). */
export const TASKS_PAGE_SIZE = 50;

/** Where a tasks/list page starts: a workspace of the key and the REST cursor inside it. */
interface TaskListPosition {
  w: string;
  c?: string;
}

function encodeTaskCursor(at: TaskListPosition): string {
  return Buffer.from(JSON.stringify(at)).toString('base64url');
}

/** A tasks/list cursor this server gave out, for a workspace the key still has; else -32602. */
function decodeTaskCursor(text: string, workspaceIds: readonly string[]): TaskListPosition {
  try {
    const at = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Partial<TaskListPosition> | null;
    if (at && typeof at.w === 'string' && workspaceIds.includes(at.w) && (at.c === undefined || typeof at.c === 'string')) return at.c === undefined ? { w: at.w } : { w: at.w, c: at.c };
  } catch {
    // falls through to the refusal
  }
  throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor for tasks/list: pass a nextCursor from a previous page.');
}

/**
 * tasks/list: the jobs of the key's workspaces (every job is a task: its id is the task id), newest
 * first, one workspace after the other. Each page is a GET /v1/jobs page of one workspace, through
 * the route (scope jobs:read, its usage points, its cursor checks), so a key never sees another
 * workspace's jobs; the cursor names the workspace and the REST cursor within it.
 */
async function listTasks(app: FastifyInstance, original: FastifyRequest, key: ApiKey, cursor: string | undefined): Promise<{ tasks: Task[]; nextCursor?: string }> {
  const workspaces = key.workspaceIds;
  if (workspaces.length === 0) return { tasks: [] };
  const at = cursor === undefined ? { w: workspaces[0]! } : decodeTaskCursor(cursor, workspaces);
  const answer = await replayRest(app, original, { method: 'GET', url: '/v1/jobs', workspaceId: at.w, query: { limit: String(TASKS_PAGE_SIZE), ...(at.c !== undefined ? { cursor: at.c } : {}) } });
  if (answer.statusCode === 400 && answer.body.code === 'INVALID_CURSOR') throw new McpError(ErrorCode.InvalidParams, 'Invalid cursor for tasks/list: pass a nextCursor from a previous page.');
  if (answer.statusCode >= 400) throw refusalError('tasks/list', answer);
  const page = (answer.body as { data: { items: JobMetadata[]; nextCursor: string | null } }).data;
  const nextWorkspace = workspaces[workspaces.indexOf(at.w) + 1];
  const next: TaskListPosition | undefined = page.nextCursor ? { w: at.w, c: page.nextCursor } : nextWorkspace !== undefined ? { w: nextWorkspace } : undefined;
  return { tasks: page.items.map(taskOf), ...(next ? { nextCursor: encodeTaskCursor(next) } : {}) };
}

/** tasks/get, tasks/result, tasks/cancel and tasks/list, answered from the database. */
export function registerTaskHandlers(server: Server, deps: Deps, app: FastifyInstance, original: FastifyRequest, key: ApiKey): void {
  server.setRequestHandler(ListTasksRequestSchema, (request) => listTasks(app, original, key, request.params?.cursor));

  server.setRequestHandler(GetTaskRequestSchema, async (request) => {
    const { answer } = await readTaskJob(deps, app, original, request.params.taskId);
    return taskOf(snapshotOf(answer));
  });

  server.setRequestHandler(GetTaskPayloadRequestSchema, async (request, extra) => {
    const taskId = request.params.taskId;
    const { workspaceId, answer: first } = await readTaskJob(deps, app, original, taskId);
    let job = snapshotOf(first);
    const token = extra._meta?.progressToken;
    let lastStatus = job.status;
    let lastPercent = -1;
    const deadline = Date.now() + MAX_RESULT_WAIT_MS;
    while (!isTerminalJob(job.status) && !extra.signal.aborted) {
      if (Date.now() > deadline) throw new McpError(-32000, `Task ${taskId} is still working; call tasks/result again.`, { task: taskOf(job) });
      if (token !== undefined && job.progress.percentage !== lastPercent) {
        lastPercent = job.progress.percentage;
        await extra.sendNotification({ method: 'notifications/progress', params: { progressToken: token, progress: lastPercent, total: 100, message: taskOf(job).statusMessage! } }).catch(() => undefined);
      }
      await sleep(TASK_POLL_MS, extra.signal);
      job = await getJob(deps, workspaceId, taskId);
      if (job.status !== lastStatus) {
        lastStatus = job.status;
        await extra.sendNotification({ method: 'notifications/tasks/status', params: taskOf(job) }).catch(() => undefined);
      }
    }
    if (extra.signal.aborted) throw new McpError(ErrorCode.RequestTimeout, 'The client went away before the task ended.');
    // The final read goes through the route again: fresh signed URLs, and the read is accounted.
    const { answer } = await readTaskJob(deps, app, original, taskId);
    const result = toolResult(answer);
    const status = snapshotOf(answer).status;
    return { ...result, isError: status === 'failed' || status === 'cancelled', _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } };
  });

  server.setRequestHandler(CancelTaskRequestSchema, async (request) => {
    const taskId = request.params.taskId;
    const { workspaceId, answer: read } = await readTaskJob(deps, app, original, taskId);
    // A task that ended cannot be cancelled (MCP), even where REST answers an idempotent repeat.
    if (isTerminalJob(snapshotOf(read).status)) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task ${taskId}: the job already ended (${snapshotOf(read).status}).`);
    const answer = await replayRest(app, original, { method: 'POST', url: `/v1/jobs/${taskId}/cancel`, workspaceId: publicWorkspaceId(workspaceId) });
    if (answer.statusCode === 409) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task ${taskId}: the job already ended.`);
    if (answer.statusCode >= 400) throw refusalError('tasks/cancel', answer);
    return taskOf(snapshotOf(answer));
  });
}
