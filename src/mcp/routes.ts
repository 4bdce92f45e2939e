/**
 * The MCP transport (decisions.md): Streamable HTTP at `/mcp`, stateless (each POST carries
 * whole JSON-RPC messages and gets JSON back; no session to keep, so any process of a
 * deployment answers). The request authenticates with the same bearer key as REST, which must
 * allow the `mcp` transport from the caller's address (401, 403 FORBIDDEN_IP, KEY_SUSPENDED and
 * FORBIDDEN_TRANSPORT are HTTP answers, as on REST).
 *
 * A tool call is replayed in-process onto its REST route (Fastify inject, marked as MCP by
 * mcp/internal.ts), so workspace, scope, IP range, usage points, validation and errors are the
 * route's own, and a run started here records `executionOrigin: "mcp"`. The tool result is the
 * REST response body (JSON text, also as structuredContent); a refusal is a result with
 * `isError: true` and the same error body, its HTTP status and Retry-After in `_meta`.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { listRoutes } from '../app.js';
import type { Deps } from '../deps.js';
import { queryPairs } from '../http/auth-hook.js';
import { errorBody, sendAppError } from '../http/error-handler.js';
import { AppError } from '../http/errors.js';
import { compileStrict } from '../http/validation.js';
import { checkKeyAccess, checkPresentedKey, recordAuthorizationFailure } from '../modules/auth/service.js';
import type { ApiKey } from '../modules/auth/types.js';
import { internalMcpHeaders } from './internal.js';
import { buildTools, type McpTool } from './tools.js';

const SERVER_INFO = { name: 'workspace-automation-service', version: '1' };

type Validator = ReturnType<typeof compileStrict>;

/** `root` is the app built by buildApp: its route catalog gives the tools, and tool calls are injected into it. */
export async function mcpRoutes(app: FastifyInstance, deps: Deps, root: FastifyInstance): Promise<void> {
  // Built at the first call, when every route is registered (the tools come from the route catalog).
  let tools: { list: McpTool[]; byName: Map<string, { tool: McpTool; validate: Validator }> } | undefined;
  const toolTable = () => {
    if (!tools) {
      const list = buildTools(listRoutes(root));
      tools = { list, byName: new Map(list.map((tool) => [tool.name, { tool, validate: compileStrict(tool.inputSchema) }])) };
    }
    return tools;
  };

  app.post('/mcp', { config: { meta: { code: 'MCP', message: 'MCP', auth: 'none' } } }, async (request, reply) => {
    const key = await authenticate(deps, request);
    if (key instanceof AppError) return sendAppError(request, reply, key);
    const server = new Server(SERVER_INFO, { capabilities: { tools: {} } });
    // The tools the key's scopes allow (a call of another one is refused by its route, 403 FORBIDDEN_SCOPE).
    server.setRequestHandler(ListToolsRequestSchema, () => ({
      tools: toolTable()
        .list.filter((t) => t.scope === undefined || (key.scopes as string[]).includes(t.scope))
        .map((t) => ({ name: t.name, description: t.description, inputSchema: t.inputSchema })),
    }));
    server.setRequestHandler(CallToolRequestSchema, (call) => callTool(root, toolTable().byName.get(call.params.name), call.params.name, call.params.arguments ?? {}, request));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    reply.hijack();
    reply.raw.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(request.raw, reply.raw, request.body);
  });

  // Stateless: there is no stream to open or session to end.
  const notAllowed = (request: FastifyRequest, reply: FastifyReply) =>
    reply.status(405).header('Allow', 'POST').send(errorBody(request, 'INVALID_REQUEST', 'The MCP endpoint is stateless: send JSON-RPC messages with POST.'));
  app.get('/mcp', { config: { meta: { code: 'MCP', message: 'MCP', auth: 'none' } } }, notAllowed);
  app.delete('/mcp', { config: { meta: { code: 'MCP', message: 'MCP', auth: 'none' } } }, notAllowed);
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
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true, _meta: { httpStatus: code === 'NOT_FOUND' ? 404 : 400 } };
}

/** Replays a tool call onto its REST route and answers with the route's response body. */
async function callTool(
  app: FastifyInstance,
  entry: { tool: McpTool; validate: Validator } | undefined,
  name: string,
  args: Record<string, unknown>,
  original: FastifyRequest,
): Promise<CallToolResult> {
  if (!entry) return toolError('NOT_FOUND', `No tool named ${name}.`);
  const { tool, validate } = entry;
  if (!validate(args)) {
    const errors = (validate.errors ?? []).map((e) => ({
      pointer: e.instancePath || '/',
      message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`,
    }));
    return toolError('INVALID_REQUEST', 'The tool arguments do not match its input schema.', { errors });
  }
  let url = tool.url;
  for (const p of tool.pathParams) url = url.replace(`:${p}`, encodeURIComponent(String(args[p])));
  const query: Record<string, string> = {};
  for (const q of tool.queryParams) if (args[q] !== undefined) query[q] = String(args[q]);
  const headers: Record<string, string> = {
    ...internalMcpHeaders(),
    authorization: String(original.headers.authorization),
    'x-service-workspace': String(args.workspaceId),
  };
  if (tool.idempotencyKey) headers['idempotency-key'] = String(args.idempotencyKey);
  let payload: string | Buffer | undefined;
  if (tool.upload) {
    const multipart = uploadBody(String(args.name), String(args.mimeType), Buffer.from(String(args.dataBase64), 'base64'));
    headers['content-type'] = multipart.contentType;
    payload = multipart.body;
  } else if (tool.method === 'POST' && tool.bodyParams.length > 0) {
    headers['content-type'] = 'application/json';
    payload = JSON.stringify(Object.fromEntries(tool.bodyParams.filter((b) => args[b] !== undefined).map((b) => [b, args[b]])));
  }
  const res = await app.inject({ method: tool.method, url, query, headers, ...(payload !== undefined ? { payload } : {}), remoteAddress: original.ip });
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(res.body) as Record<string, unknown>;
  } catch {
    body = { success: false, code: 'INTERNAL_ERROR', message: 'The service answered without a JSON body.' };
  }
  const isError = res.statusCode >= 400;
  const retryAfter = res.headers['retry-after'];
  return {
    content: [{ type: 'text', text: res.body }],
    structuredContent: body,
    isError,
    _meta: { httpStatus: res.statusCode, ...(retryAfter !== undefined ? { retryAfter: Number(retryAfter) } : {}) },
  };
}

/** multipart/form-data with one file part named `file`, as REST uploads send it. */
function uploadBody(name: string, mimeType: string, bytes: Buffer): { contentType: string; body: Buffer } {
  const boundary = `----mcp-${randomBytes(12).toString('hex')}`;
  // Header values cannot carry quotes or line breaks; the REST receiver reads the name as sent.
  const safeName = name.replace(/["\r\n\\]/g, '_');
  const safeType = mimeType.replace(/[\r\n]/g, '');
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${safeName}"\r\nContent-Type: ${safeType}\r\n\r\n`);
  return { contentType: `multipart/form-data; boundary=${boundary}`, body: Buffer.concat([head, bytes, Buffer.from(`\r\n--${boundary}--\r\n`)]) };
}
