/**
 * The MCP transport (decisions.md, docs/mcp.md): Streamable HTTP at `/mcp`, stateless (each POST
 * carries whole JSON-RPC messages and gets JSON back, or an SSE stream where notifications come
 * before the answer; no session to keep, so any process of a deployment answers). The request
 * authenticates with the same bearer key as REST, which must allow the `mcp` transport from the
 * caller's address (401, 403 FORBIDDEN_IP, KEY_SUSPENDED and FORBIDDEN_TRANSPORT are HTTP
 * answers, as on REST).
 *
 * A tool call is replayed in-process onto its REST route (Fastify inject, marked as MCP by
 * mcp/internal.ts), so workspace, scope, IP range, usage points, validation and errors are the
 * route's own, and a run started here records `executionOrigin: "mcp"`. The tool result is the
 * REST response body (JSON text, also as structuredContent); a refusal is a result with
 * `isError: true` and the same error body, its HTTP status and Retry-After in `_meta`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  CancelTaskRequestSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  InitializeRequestSchema,
  isJSONRPCRequest,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  McpError,
  PingRequestSchema,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { listRoutes } from '../http/route-catalogue.js';
import type { Deps } from '../deps.js';
import { queryPairs } from '../http/auth-hook.js';
import { errorBody, prototypeKeyRefusal, sendAppError } from '../http/error-handler.js';
import { prototypeKeys } from './prototype-keys.js';
import { AppError } from '../http/errors.js';
import { checkKeyAccess, checkPresentedKey, recordAuthorizationFailure } from '../modules/auth/service.js';
import type { ApiKey } from '../modules/auth/types.js';
import { toolResult } from './results.js';
import { watchRun } from './internal.js';
import { replayRest } from './replay.js';
import { originAllowed, requestRevision, transportRefusal } from './transport-rules.js';
import { parseTaskEventId, readableWorkspaces, taskHubs, RESUME_OVERLAP_MS, RESUME_WINDOW_MS, TaskNotificationHub, TaskStatusStream } from './task-notifications.js';
import { acceptsEventStream } from '../modules/jobs/stream-service.js';
import { isUuid } from '../lib/ids.js';
import { registerTaskHandlers, taskForCall, withProgress } from './tasks.js';
import type { McpTool } from './tools.js';
import { buildToolTable, findTool, listedTools, taskCapable, type ToolOutcome, type ToolTable, type Validator } from './tool-table.js';

const SERVER_INFO = { name: 'workspace-automation-service', version: '1' };


/** What the /mcp routes (endpoint.ts) hand each request to, once this module is loaded. */
export interface McpHandlers {
  post(request: FastifyRequest, reply: FastifyReply): Promise<unknown>;
  openStream(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
  hub: TaskNotificationHub;
}

/**
 * The handlers of POST /mcp (JSON-RPC) and GET /mcp (the standing task stream). `root` is the app
 * built by buildApp: its route catalog gives the tools, and tool calls are injected into it.
 */
export function mcpHandlers(deps: Deps, root: FastifyInstance): McpHandlers {
  // Built at the first call, when every route is registered (the tools come from the route catalog).
  let tools: ToolTable | undefined;
  const toolTable = () => (tools ??= buildToolTable(listRoutes(root)));

  const post = async (request: FastifyRequest, reply: FastifyReply) => {
    // A browser page of another origin (DNS rebinding) is refused before the key is read.
    if (!originAllowed(request.headers.origin, deps.config.mcpAllowedOrigins)) {
      return sendAppError(request, reply, new AppError('FORBIDDEN_ORIGIN', { details: { origin: request.headers.origin } }));
    }
    const key = await authenticate(deps, request);
    if (key instanceof AppError) return sendAppError(request, reply, key);
    const transportRefused = transportRefusal(request.headers['mcp-protocol-version'], request.body);
    if (transportRefused) return reply.status(transportRefused.status).send(transportRefused.body);
    const refusal = batchRefusal(request.body);
    if (refusal) return reply.status(400).send({ jsonrpc: '2.0', id: null, error: { code: ErrorCode.InvalidRequest, message: `Invalid Request: ${refusal}` } });
    const server = new Server(SERVER_INFO, { capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } } });
    // The tools the key's scopes allow (a call of another one is refused by its route, 403 FORBIDDEN_SCOPE).
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: listedTools(deps, key, toolTable()).map((t) => ({
        name: t.name,
        title: t.title,
        description: t.description,
        inputSchema: t.inputSchema,
        outputSchema: t.outputSchema,
        annotations: t.annotations,
        ...(taskCapable(t) && t.asynchronous !== false ? { execution: { taskSupport: 'optional' as const } } : {}),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (call, extra) => {
      const name = call.params.name;
      if (prototypeKeys.has(request)) {
        const refusal = prototypeKeyRefusal();
        return toolError('INVALID_REQUEST', refusal.message, refusal.details);
      }
      const entry = findTool(deps, key, toolTable(), name);
      if (call.params.task && !(entry && taskCapable(entry.tool))) {
        throw new McpError(ErrorCode.InvalidParams, `${name} does not run as a task (only runs and retries do); call it without "task".`);
      }
      const token = extra._meta?.progressToken;
      // A run followed with progress learns its job id from the runs route once admitted.
      let jobId: string | undefined;
      const watch = token !== undefined && !call.params.task && entry && taskCapable(entry.tool) ? watchRun((id) => (jobId = id)) : undefined;
      try {
        const work = replayTool(root, entry, name, call.params.arguments ?? {}, request, watch?.headers);
        if (call.params.task) return taskForCall(deps, name, await work);
        const answer = await withProgress(deps, token, extra.sendNotification, name, work, () => jobId);
        return answer.early ?? toolResult(answer.answer);
      } finally {
        watch?.stop();
      }
    });
    registerTaskHandlers(server, deps, root, request, key);
    // SSE only where notifications can come before the answer; JSON for everything else.
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !wantsStream(request.headers.accept, request.body) });
    // The transport writes the response itself: the headers set so far (X-Request-Id, which every
    // response carries) go onto the raw response first, since Fastify does not send them after hijack.
    for (const [name, value] of Object.entries(reply.getHeaders())) if (value !== undefined) reply.raw.setHeader(name, value);
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    answerInvalidParams(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  };

  // The standing stream: task status notifications (task-notifications.ts).
  const hub = new TaskNotificationHub(deps, deps.streamSettings);
  taskHubs.set(root, hub);
  return { post, openStream: (request, reply) => openTaskStream(deps, hub, request, reply), hub };
}

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

/** The revision from which GET /mcp offers a stream: tasks, and so their status notifications, are new in it. */
export const STANDING_STREAM_REVISION = '2025-11-25';

/**
 * GET /mcp: the standing SSE stream of task status notifications. Checked in this order, each
 * refusal before anything of the stream is written: Origin (403 FORBIDDEN_ORIGIN),
 * MCP-Protocol-Version (400 for an unknown revision; 405 for one before 2025-11-25, which has no
 * tasks to notify, whoever asks), the key (401, 403 FORBIDDEN_IP, KEY_SUSPENDED,
 * FORBIDDEN_TRANSPORT), Accept (406, as the SDK
 * answers a POST), the workspace (X-Service-Workspace as on REST: 400 malformed, 403
 * FORBIDDEN_WORKSPACE; without it every workspace of the key) and scope jobs:read (403
 * FORBIDDEN_SCOPE), Last-Event-ID (400), shutdown (503), then the caps (429 CONCURRENCY_LIMITED).
 */
async function openTaskStream(deps: Deps, hub: TaskNotificationHub, request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
  if (!originAllowed(request.headers.origin, deps.config.mcpAllowedOrigins)) {
    return sendAppError(request, reply, new AppError('FORBIDDEN_ORIGIN', { details: { origin: request.headers.origin } }));
  }
  // What the method offers depends on the revision alone, whoever asks: checked before the key.
  const header = request.headers['mcp-protocol-version'];
  const refused = transportRefusal(header, undefined);
  if (refused) return reply.status(refused.status).send(refused.body);
  const revision = requestRevision(header, undefined);
  if (revision < STANDING_STREAM_REVISION) {
    return reply
      .status(405)
      .header('Allow', 'POST')
      .send(errorBody(request, 'INVALID_REQUEST', `MCP ${revision} has no tasks, so the endpoint offers no stream to its clients (it sends task status notifications from ${STANDING_STREAM_REVISION}); send JSON-RPC messages with POST.`));
  }
  const key = await authenticate(deps, request);
  if (key instanceof AppError) return sendAppError(request, reply, key);
  if (!acceptsEventStream(request.headers.accept)) {
    return reply.status(406).send({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Not Acceptable: the stream needs Accept: text/event-stream.' } });
  }
  const workspaceHeader = request.headers['x-service-workspace'];
  const candidates = workspaceHeader === undefined ? key.workspaceIds : [workspaceHeader];
  let workspaces: string[] | AppError;
  if (workspaceHeader !== undefined && (typeof workspaceHeader !== 'string' || !isUuid(workspaceHeader))) {
    workspaces = new AppError('INVALID_REQUEST', { message: 'The X-Service-Workspace header must hold one workspace UUID.' });
  } else {
    workspaces = await readableWorkspaces(deps, key, candidates as string[], request.ip);
  }
  if (workspaces instanceof AppError) return sendAppError(request, reply, (await recordAuthorizationFailure(deps, key, workspaces)) ?? workspaces);
  let resumeFrom: number | undefined;
  try {
    resumeFrom = parseTaskEventId(request.headers['last-event-id']);
  } catch (err) {
    return sendAppError(request, reply, err as AppError);
  }
  if (hub.closing) return sendAppError(request, reply, new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 }));
  const over = hub.reserve(deps.config.streamsPerProcess);
  if (over) return sendAppError(request, reply, streamsLimited(deps, over));
  let slotId: string;
  try {
    const slot = await hub.takeSlot(key);
    if (!('slotId' in slot)) {
      hub.opened();
      return sendAppError(request, reply, streamsLimited(deps, slot));
    }
    slotId = slot.slotId;
  } catch (err) {
    hub.opened();
    throw err;
  }
  const now = deps.clock.now();
  // A position older than the window (or one from the future) starts the stream afresh.
  const resumable = resumeFrom !== undefined && resumeFrom >= now - RESUME_WINDOW_MS && resumeFrom <= now + RESUME_OVERLAP_MS;
  const position = resumable ? resumeFrom! : now;
  let stream: TaskStatusStream;
  try {
    stream = new TaskStatusStream(hub, {
      key,
      credentials: { authorization: request.headers.authorization, ip: request.ip },
      pinned: workspaceHeader === undefined ? undefined : (workspaces[0] as string),
      workspaces,
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
    return sendAppError(request, reply, new AppError('UNAVAILABLE', { message: 'The server is shutting down; retry the request.', retryAfter: 1 }));
  }
  reply.hijack();
  // A client that went away while the request waited closed the response before any listener existed.
  if (reply.raw.destroyed || request.raw.destroyed) {
    hub.releaseSlot(slotId);
    hub.releaseIfIdle();
    return reply;
  }
  reply.raw.on('close', () => stream.end('client'));
  reply.raw.on('error', () => stream.end('client'));
  stream.open(reply.getHeaders());
  hub.add(stream);
  if (resumable) {
    await hub.replay(stream, position - RESUME_OVERLAP_MS).catch((err: unknown) => {
      request.log.error({ err }, 'MCP task stream replay failed');
      stream.end('error');
    });
  }
  void hub.poll();
  return reply;
}

/**
 * Why a JSON-RPC batch is refused whole, if it is: an empty batch (JSON-RPC 2.0: a single Invalid
 * Request error), or one that repeats a request id. The transport answers a batch once every id has
 * a response, so a second request with the same id would run unreported (its response finds the
 * exchange closed).
 */
function batchRefusal(body: unknown): string | undefined {
  if (!Array.isArray(body)) return undefined;
  if (body.length === 0) return 'the batch is empty.';
  const repeated = repeatedRequestId(body);
  return repeated === undefined ? undefined : `the batch repeats the request id ${JSON.stringify(repeated)}; each request needs its own id.`;
}

/** The first id (a string or number: other ids fail the message check) that two requests of a JSON-RPC batch share, if any. */
function repeatedRequestId(body: unknown[]): string | number | undefined {
  const seen = new Set<string>();
  for (const message of body as unknown[]) {
    if (message === null || typeof message !== 'object' || typeof (message as { method?: unknown }).method !== 'string') continue;
    const id = (message as { id?: unknown }).id;
    if (typeof id !== 'string' && typeof id !== 'number') continue;
    const key = `${typeof id}:${id}`;
    if (seen.has(key)) return id;
    seen.add(key);
  }
  return undefined;
}

interface ParamsSchema {
  safeParse(value: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } };
}

/** The request schemas of the methods this server answers. */
const REQUEST_SCHEMAS = new Map<string, ParamsSchema>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['tasks/get', GetTaskRequestSchema],
  ['tasks/result', GetTaskPayloadRequestSchema],
  ['tasks/cancel', CancelTaskRequestSchema],
  ['tasks/list', ListTasksRequestSchema],
]);

/**
 * Params that do not fit their method are the client's mistake: JSON-RPC -32602 Invalid params.
 * The SDK parses them before the handler and reports a failure as -32603 Internal error (a server
 * fault), so each request is checked here, between the transport and the server, and answered
 * with -32602 without reaching it.
 */
function answerInvalidParams(transport: StreamableHTTPServerTransport): void {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message)) {
      const parsed = REQUEST_SCHEMAS.get(message.method)?.safeParse(message);
      if (parsed && !parsed.success) {
        const issue = parsed.error?.issues[0];
        const where = issue ? `: ${issue.path.map(String).join('.') || 'params'}: ${issue.message}` : '';
        transport
          .send({ jsonrpc: '2.0', id: message.id, error: { code: ErrorCode.InvalidParams, message: `Invalid params for ${message.method}${where}` } })
          .catch(() => undefined);
        return;
      }
    }
    deliver?.(message, extra);
  };
}

/**
 * Whether to answer with an SSE stream: the client accepts one and the body holds a request that
 * may send notifications before its answer (tasks/result, or tools/call with a progressToken).
 */
function wantsStream(accept: string | undefined, body: unknown): boolean {
  if (!accept?.includes('text/event-stream')) return false;
  return (Array.isArray(body) ? body : [body]).some((message) => {
    if (message === null || typeof message !== 'object') return false;
    const m = message as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
    return m.method === 'tasks/result' || (m.method === 'tools/call' && m.params?._meta?.progressToken !== undefined);
  });
}

/** The key of the MCP request: valid, and allowed the mcp transport. */
async function authenticate(deps: Deps, request: FastifyRequest): Promise<ApiKey | AppError> {
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

function toolError(code: 'INVALID_REQUEST' | 'NOT_FOUND', message: string, details?: Record<string, unknown>): CallToolResult {
  const body = { success: false, code, message, ...(details ? { details } : {}) };
  return { content: [{ type: 'text', text: JSON.stringify(body) }], isError: true, _meta: { httpStatus: code === 'NOT_FOUND' ? 404 : 400 } };
}

/**
 * Replays a tool call onto its REST route: the route's answer, or a tool error when the call never
 * reaches it (unknown tool, arguments outside the tool's schema).
 */
export async function replayTool(
  app: FastifyInstance,
  entry: { tool: McpTool; validate: Validator } | undefined,
  name: string,
  args: Record<string, unknown>,
  original: FastifyRequest,
  extraHeaders: Record<string, string> = {},
): Promise<ToolOutcome> {
  if (!entry) return { early: toolError('NOT_FOUND', `No tool named ${name}.`) };
  const { tool, validate } = entry;
  if (!validate(args)) {
    const errors = (validate.errors ?? []).map((e) => ({
      pointer: e.instancePath || '/',
      message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`,
    }));
    return { early: toolError('INVALID_REQUEST', 'The tool arguments do not match its input schema.', { errors }) };
  }
  // Buffer.from(…, 'base64') skips what it cannot read and stops at padding: refuse such text
  // rather than upload bytes the client did not send.
  if (tool.upload && !isBase64(String(args.dataBase64))) {
    return { early: toolError('INVALID_REQUEST', 'dataBase64 is not base64.', { errors: [{ pointer: '/dataBase64', message: 'must be base64 (RFC 4648, standard or URL-safe alphabet)' }] }) };
  }
  let url = tool.url;
  for (const p of tool.pathParams) url = url.replace(`:${p}`, encodeURIComponent(String(args[p])));
  const query: Record<string, string | string[]> = {};
  // A repeatable parameter (an array argument, e.g. groupBy) is sent once per value.
  for (const q of tool.queryParams) if (args[q] !== undefined) query[q] = Array.isArray(args[q]) ? (args[q] as unknown[]).map(String) : String(args[q]);
  const headers: Record<string, string> = { ...extraHeaders };
  // Runs and retries without a key get one drawn here, returned with the result (a second call
  // with it replays instead of spending again).
  const idempotencyKey = tool.idempotencyKey === 'none' ? undefined : args.idempotencyKey === undefined ? randomUUID() : String(args.idempotencyKey);
  if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
  let payload: string | Buffer | undefined;
  if (tool.upload) {
    const multipart = uploadBody(String(args.name), String(args.mimeType), Buffer.from(String(args.dataBase64), 'base64'));
    headers['content-type'] = multipart.contentType;
    payload = multipart.body;
  } else if (tool.operationId !== undefined) {
    const input = Object.fromEntries(Object.entries(args).filter(([name]) => name !== 'workspaceId' && name !== 'idempotencyKey'));
    headers['content-type'] = 'application/json';
    payload = stringifyJson({ operationId: tool.operationId, input });
  } else if (tool.method === 'POST' && tool.bodyParams.length > 0) {
    headers['content-type'] = 'application/json';
    payload = stringifyJson(Object.fromEntries(tool.bodyParams.filter((b) => args[b] !== undefined).map((b) => [b, args[b]])));
  }
  const answer = await replayRest(app, original, { method: tool.method, url, query, headers, workspaceId: String(args.workspaceId), ...(payload !== undefined ? { payload } : {}) });
  return { answer: { ...answer, ...(tool.idempotencyKey === 'optional' ? { idempotencyKey } : {}) } };
}

/**
 * Base64 that decodes without loss: the standard or URL-safe alphabet, padding only at the end and
 * only to a whole quantum (or none), no length that no encoding has; line breaks and spaces
 * (MIME-style wrapping) are tolerated.
 */
export function isBase64(text: string): boolean {
  const m = /^([A-Za-z0-9+/_-]*)(={0,2})$/.exec(text.replace(/[\t\n\r ]/g, ''));
  if (!m) return false;
  const data = m[1]!.length;
  const padding = m[2]!.length;
  if (data % 4 === 1) return false;
  return padding === 0 || (data + padding) % 4 === 0;
}

/**
 * JSON.stringify for parsed JSON values, without recursion: JSON.stringify overflows the stack on a
 * few thousand nested arrays, which the arguments of one tool call can hold (the REST route answers
 * such a body with its own 400; the replay must reach it rather than fail on the way).
 */
export function stringifyJson(root: unknown): string {
  const out: string[] = [];
  const stack: { entries: [string | undefined, unknown][]; next: number; close: string }[] = [];
  let value = root;
  for (;;) {
    if (value !== null && typeof value === 'object') {
      const isArray = Array.isArray(value);
      out.push(isArray ? '[' : '{');
      stack.push({
        entries: isArray
          ? (value as unknown[]).map((v): [undefined, unknown] => [undefined, v === undefined || typeof v === 'function' ? null : v])
          : Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined && typeof v !== 'function'),
        next: 0,
        close: isArray ? ']' : '}',
      });
    } else {
      out.push(JSON.stringify(value) ?? 'null');
    }
    let more = false;
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.next < top.entries.length) {
        const [key, next] = top.entries[top.next]!;
        if (top.next > 0) out.push(',');
        if (key !== undefined) out.push(JSON.stringify(key), ':');
        top.next += 1;
        value = next;
        more = true;
        break;
      }
      out.push(top.close);
      stack.pop();
    }
    if (!more) return out.join('');
  }
}

/** multipart/form-data with one file part named `file`, as REST uploads send it. */
function uploadBody(name: string, mimeType: string, bytes: Buffer): { contentType: string; body: Buffer } {
  const boundary = `----mcp-${randomBytes(12).toString('hex')}`;
  // A quoted-string: `"` and `\` are escaped (the receiver unescapes them, so the item is named as
  // a REST upload of that filename would be). A line break cannot be carried in a header at all;
  // it is a control character, which the name drops anyway.
  const safeName = name.replace(/[\r\n]/g, '').replace(/["\\]/g, (c) => `\\${c}`);
  const safeType = mimeType.replace(/[\r\n]/g, '');
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: ${safeType}\r\n\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]) };
}
