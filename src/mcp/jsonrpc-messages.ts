/**
 * What the POST handler reads from JSON-RPC messages before the SDK does: a batch refused whole
 * (empty, or repeating a request id), params that do not fit their method (answered -32602
 * here, where the SDK would answer -32603), and whether the answer is an SSE stream.
 */
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
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
  PingRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

/**
 * Why a JSON-RPC batch is refused whole, if it is: an empty batch (JSON-RPC 2.0: a single Invalid
 * Request error), or one that repeats a request id. The transport answers a batch once every id has
 * a response, so a second request with the same id would run unreported (its response finds the
 * exchange closed).
 */
export function batchRefusal(body: unknown): string | undefined {
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
export function answerInvalidParams(transport: StreamableHTTPServerTransport): void {
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
export function wantsStream(accept: string | undefined, body: unknown): boolean {
  if (!accept?.includes('text/event-stream')) return false;
  return (Array.isArray(body) ? body : [body]).some((message) => {
    if (message === null || typeof message !== 'object') return false;
    const m = message as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } };
    return m.method === 'tasks/result' || (m.method === 'tools/call' && m.params?._meta?.progressToken !== undefined);
  });
}
