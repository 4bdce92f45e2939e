/**
 * GET /mcp: opens the standing SSE stream of task status notifications (task-notifications.ts).
 * Every refusal comes before anything of the stream is written, and a stream is counted against
 * the process's cap and its key's slots before it opens.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../deps.js';
import { errorBody, sendAppError } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import { isUuid } from '../lib/ids.js';
import { recordAuthorizationFailure } from '../modules/auth/service.js';
import type { ApiKey } from '../modules/auth/types.js';
import { acceptsEventStream } from '../modules/jobs/stream-service.js';
import { authenticate, readableWorkspaces } from './key-access.js';
import { parseTaskEventId, RESUME_OVERLAP_MS, RESUME_WINDOW_MS } from './task-events.js';
import type { TaskNotificationHub } from './task-notifications.js';
import { TaskStatusStream } from './task-status-stream.js';
import { originAllowed, requestRevision, transportRefusal } from './transport-rules.js';

/** The revision from which GET /mcp offers a stream: tasks, and so their status notifications, are new in it. */
export const STANDING_STREAM_REVISION = '2025-11-25';

/** 429 CONCURRENCY_LIMITED for a stream over the process's cap (scope service) or its key's (scope key, every process). */
function streamsLimited(deps: Deps, over: { scope: 'service' | 'key'; open: number; limit: number }): AppError {
  const now = deps.clock.now();
  const who = over.scope === 'service' ? 'This server' : 'This API key';
  return new AppError('CONCURRENCY_LIMITED', {
    message: `${who} already has ${over.open} open MCP stream${over.open === 1 ? '' : 's'} (its limit is ${over.limit}); close one first.`,
    retryAfter: 5,
    details: { limit: 'STREAMS', scope: over.scope, streams: over.open, maximum: over.limit, resetsAt: new Date(now + 5000).toISOString() },
  });
}

const shuttingDown = () => new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 });

/** What an admitted stream request asks for. */
interface StreamRequest {
  key: ApiKey;
  /** The workspace X-Service-Workspace named, or undefined for every workspace of the key. */
  pinned: string | undefined;
  workspaces: string[];
  /** The position its Last-Event-ID names, if any. */
  resumeFrom: number | undefined;
}

/**
 * The checks of a stream request, in this order: Origin (403 FORBIDDEN_ORIGIN),
 * MCP-Protocol-Version (400 for an unknown revision; 405 for one before 2025-11-25, which has no
 * tasks to notify, whoever asks), the key (401, 403 FORBIDDEN_IP, KEY_SUSPENDED,
 * FORBIDDEN_TRANSPORT), Accept (406, as the SDK answers a POST), the workspace
 * (X-Service-Workspace as on REST: 400 malformed, 403 FORBIDDEN_WORKSPACE; without it every
 * workspace of the key) and scope jobs:read (403 FORBIDDEN_SCOPE), Last-Event-ID (400).
 */
async function admitStreamRequest(deps: Deps, request: FastifyRequest, reply: FastifyReply): Promise<StreamRequest | { refusal: FastifyReply }> {
  if (!originAllowed(request.headers.origin, deps.config.mcpAllowedOrigins)) {
    return { refusal: sendAppError(request, reply, new AppError('FORBIDDEN_ORIGIN', { details: { origin: request.headers.origin } })) };
  }
  // What the method offers depends on the revision alone, whoever asks: checked before the key.
  const header = request.headers['mcp-protocol-version'];
  const refused = transportRefusal(header, undefined);
  if (refused) return { refusal: reply.status(refused.status).send(refused.body) };
  const revision = requestRevision(header, undefined);
  if (revision < STANDING_STREAM_REVISION) {
    return {
      refusal: reply
        .status(405)
        .header('Allow', 'POST')
        .send(errorBody(request, 'INVALID_REQUEST', `MCP ${revision} has no tasks, so the endpoint offers no stream to its clients (it sends task status notifications from ${STANDING_STREAM_REVISION}); send JSON-RPC messages with POST.`)),
    };
  }
  const key = await authenticate(deps, request);
  if (key instanceof AppError) return { refusal: sendAppError(request, reply, key) };
  if (!acceptsEventStream(request.headers.accept)) {
    return { refusal: reply.status(406).send({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not Acceptable: the stream needs Accept: text/event-stream.' } }) };
  }
  const workspaceHeader = request.headers['x-service-workspace'];
  const candidates = workspaceHeader === undefined ? key.workspaceIds : [workspaceHeader];
  let workspaces: string[] | AppError;
  if (workspaceHeader !== undefined && (typeof workspaceHeader !== 'string' || !isUuid(workspaceHeader))) {
    workspaces = new AppError('INVALID_REQUEST', { message: 'The X-Service-Workspace header must hold one workspace UUID.' });
  } else {
    workspaces = await readableWorkspaces(deps, key, candidates as string[], request.ip);
  }
  if (workspaces instanceof AppError) return { refusal: sendAppError(request, reply, (await recordAuthorizationFailure(deps, key, workspaces)) ?? workspaces) };
  let resumeFrom: number | undefined;
  try {
    resumeFrom = parseTaskEventId(request.headers['last-event-id']);
  } catch (err) {
    return { refusal: sendAppError(request, reply, err as AppError) };
  }
  return { key, pinned: workspaceHeader === undefined ? undefined : (workspaces[0] as string), workspaces, resumeFrom };
}

/**
 * A place for the stream: not at shutdown (503), within the process's cap, then a slot of the
 * key's cap (429 CONCURRENCY_LIMITED). The process's count stays reserved for the caller, which
 * calls `hub.opened()` once its open succeeded or failed.
 */
async function takeStreamPlace(deps: Deps, hub: TaskNotificationHub, key: ApiKey, request: FastifyRequest, reply: FastifyReply): Promise<{ slotId: string } | { refusal: FastifyReply }> {
  if (hub.closing) return { refusal: sendAppError(request, reply, shuttingDown()) };
  if (!hub.reserve(deps.config.streamsPerProcess)) return { refusal: sendAppError(request, reply, streamsLimited(deps, { scope: 'service', open: hub.load, limit: deps.config.streamsPerProcess })) };
  try {
    const slot = await hub.takeSlot(key);
    if (!('slotId' in slot)) {
      hub.opened();
      return { refusal: sendAppError(request, reply, streamsLimited(deps, slot)) };
    }
    return slot;
  } catch (err) {
    hub.opened();
    throw err;
  }
}

/**
 * GET /mcp: the standing SSE stream of task status notifications. The request's checks
 * (admitStreamRequest), then shutdown (503) and the caps (429 CONCURRENCY_LIMITED), each refusal
 * before anything of the stream is written.
 */
export async function openTaskStream(deps: Deps, hub: TaskNotificationHub, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  const asked = await admitStreamRequest(deps, request, reply);
  if ('refusal' in asked) return asked.refusal;
  const place = await takeStreamPlace(deps, hub, asked.key, request, reply);
  if ('refusal' in place) return place.refusal;
  const { slotId } = place;
  const now = deps.clock.now();
  // A position older than the window (or one from the future) starts the stream afresh.
  const { resumeFrom } = asked;
  const resumable = resumeFrom !== undefined && resumeFrom >= now - RESUME_WINDOW_MS && resumeFrom <= now + RESUME_OVERLAP_MS;
  const position = resumable ? resumeFrom! : now;
  let stream: TaskStatusStream;
  try {
    stream = new TaskStatusStream(hub, {
      key: asked.key,
      credentials: { authorization: request.headers.authorization, ip: request.ip },
      pinned: asked.pinned,
      workspaces: asked.workspaces,
      floorMs: position - RESUME_OVERLAP_MS,
      positionMs: position,
      slotId,
      res: reply.raw,
      log: request.log,
    });
    // Listening before the response starts: no change committed after the open is missed.
    await hub.listen();
  } catch (err) {
    hub.releaseSlot(slotId);
    throw err;
  } finally {
    hub.opened();
  }
  if (hub.closing) {
    hub.releaseSlot(slotId);
    return sendAppError(request, reply, shuttingDown());
  }
  return startStream(hub, stream, request, reply, resumable ? position - RESUME_OVERLAP_MS : undefined);
}

/** Takes the response over and starts the stream: its head, then the replay from `replayFrom` when it resumes. */
async function startStream(hub: TaskNotificationHub, stream: TaskStatusStream, request: FastifyRequest, reply: FastifyReply, replayFrom: number | undefined): Promise<FastifyReply> {
  reply.hijack();
  // A client that went away while the request waited closed the response before any listener existed.
  if (reply.raw.destroyed || request.raw.destroyed) {
    hub.releaseSlot(stream.slotId);
    hub.releaseIfIdle();
    return reply;
  }
  reply.raw.on('close', () => stream.end('client'));
  reply.raw.on('error', () => stream.end('client'));
  stream.open(reply.getHeaders());
  hub.add(stream);
  if (replayFrom !== undefined) {
    await hub.replay(stream, replayFrom).catch((err: unknown) => {
      request.log.error({ err }, 'MCP task stream replay failed');
      stream.end('error');
    });
  }
  void hub.poll();
  return reply;
}
