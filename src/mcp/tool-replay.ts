/**
 * A tool call replayed onto its REST route: the tool's arguments checked against its input
 * schema, then turned into the route's path, query, headers and body (JSON, or multipart for an
 * upload) and injected in-process (replay.ts), so workspace, scope, IP range, usage points,
 * validation and errors are the route's own. A call that never reaches its route (unknown tool,
 * arguments outside the schema, dataBase64 that is not base64) is a tool error with the status
 * REST would give.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { replayRest } from './replay.js';
import type { ToolOutcome, Validator } from './tool-table.js';
import type { McpTool } from './tools.js';

export function toolError(code: 'INVALID_REQUEST' | 'NOT_FOUND', message: string, details?: Record<string, unknown>): CallToolResult {
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
