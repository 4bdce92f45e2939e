/**
 * POST /mcp: Streamable HTTP, stateless (each POST carries whole JSON-RPC messages and gets JSON
 * back, or an SSE stream where notifications come before the answer; no session to keep, so any
 * process of a deployment answers). The request authenticates with the same bearer key as REST,
 * which must allow the `mcp` transport from the caller's address (401, 403 FORBIDDEN_IP,
 * KEY_SUSPENDED and FORBIDDEN_TRANSPORT are HTTP answers, as on REST).
 *
 * A tool call is replayed in-process onto its REST route (tool-replay.ts, marked as MCP by
 * mcp/internal.ts), so workspace, scope, IP range, usage points, validation and errors are the
 * route's own, and a run started here records `executionOrigin: "mcp"`. The tool result is the
 * REST response body (JSON text, also as structuredContent); a refusal is a result with
 * `isError: true` and the same error body, its HTTP status and Retry-After in `_meta`.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Deps } from '../deps.js';
import { prototypeKeyRefusal, sendAppError } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import type { ApiKey } from '../modules/auth/types.js';
import { watchRun } from './internal.js';
import { ReplyText } from './reply-text.js';
import { answerInvalidParams, batchRefusal, wantsStream } from './jsonrpc-messages.js';
import { authenticate } from './key-access.js';
import { prototypeKeys } from './prototype-keys.js';
import { toolResult } from './results.js';
import { registerTaskHandlers, taskForCall, withProgress } from './tasks.js';
import { findTool, listedTools, taskCapable, type ToolTable } from './tool-table.js';
import { replayTool, toolError } from './tool-replay.js';
import { originAllowed, transportRefusal } from './transport-rules.js';

const SERVER_INFO = { name: 'workspace-automation-service', version: '1' };

/** Answers one POST /mcp. `root` is the app built by buildApp: tool calls are injected into it. */
export async function answerPost(deps: Deps, root: FastifyInstance, toolTable: () => ToolTable, request: FastifyRequest, reply: FastifyReply): Promise<unknown> {
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
  const server = mcpServer(deps, root, toolTable, request, key);
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
}

/** The MCP server of one request: the tools its key may list, tool calls replayed onto REST, tasks. */
function mcpServer(deps: Deps, root: FastifyInstance, toolTable: () => ToolTable, request: FastifyRequest, key: ApiKey): Server {
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
    // A run followed with progress learns its job id from the runs route once admitted, and the
    // reply's text as it is generated when it streams one (chat.generate).
    let jobId: string | undefined;
    const text = token !== undefined && !call.params.task && entry && taskCapable(entry.tool) ? new ReplyText() : undefined;
    const watch = text ? watchRun((id) => (jobId = id), text.push) : undefined;
    try {
      const work = replayTool(root, entry, name, call.params.arguments ?? {}, request, watch?.headers);
      if (call.params.task) return taskForCall(deps, name, await work);
      const answer = await withProgress(deps, token, extra.sendNotification, name, work, () => jobId, text);
      return answer.early ?? toolResult(answer.answer);
    } finally {
      watch?.stop();
    }
  });
  registerTaskHandlers(server, deps, root, request, key);
  return server;
}
