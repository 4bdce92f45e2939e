/**
 * The MCP tools: one per public REST endpoint, named `service_<area>_<verb>` (decisions.md), each
 * taking `workspaceId` plus the endpoint's inputs (path parameters, query, JSON body fields, and
 * `idempotencyKey` where the endpoint takes an Idempotency-Key). Their input schemas are derived
 * from the routes' own TypeBox schemas, so the two transports accept the same inputs.
 *
 * Not offered: the job stream (SSE; an MCP client polls service_jobs_get) and the multipart
 * upload, whose MCP counterpart takes the file as base64 (spec Rule 8: at most 60,000
 * characters; larger files go through REST, then their media id is passed to the tool).
 */
import type { ToolAnnotations } from '@modelcontextprotocol/sdk/types.js';
import type { RouteEntry } from '../http/route-catalogue.js';
import { routeToolAnnotations } from './tool-annotations.js';

export const MCP_UPLOAD_MAX_BASE64 = 60_000;

/** REST route (`METHOD url`) → tool name. */
const TOOL_NAMES: Record<string, string> = {
  'GET /v1/workspaces': 'service_workspaces_list',
  'GET /v1/usage': 'service_usage_get',
  'GET /v1/usage/history': 'service_usage_history',
  'GET /v1/balance': 'service_balance_get',
  'GET /v1/transactions': 'service_transactions_list',
  'GET /v1/costs': 'service_costs_get',
  'GET /v1/tools': 'service_tools_list',
  'POST /v1/estimates': 'service_estimates_create',
  'POST /v1/runs': 'service_runs_create',
  'GET /v1/runs/lookup': 'service_runs_lookup',
  'GET /v1/jobs': 'service_jobs_list',
  'GET /v1/jobs/:jobId': 'service_jobs_get',
  'GET /v1/jobs/:jobId/output': 'service_jobs_output',
  'POST /v1/jobs/:jobId/cancel': 'service_jobs_cancel',
  'POST /v1/jobs/:jobId/retry': 'service_jobs_retry',
  'GET /v1/queue': 'service_queue_get',
  'GET /v1/media': 'service_media_list',
  'GET /v1/media/:mediaId': 'service_media_get',
  'POST /v1/media/upload': 'service_media_upload',
  'GET /v1/media/:mediaId/download': 'service_media_download',
  'GET /v1/voices': 'service_voices_list',
  'GET /v1/voices/:voiceId': 'service_voices_get',
  'DELETE /v1/voices/:voiceId': 'service_voices_delete',
  'GET /v1/events': 'service_events_list',
  'POST /v1/test/webhook-events': 'service_test_events_trigger',
  'GET /v1/webhooks': 'service_webhooks_list',
  'POST /v1/webhooks': 'service_webhooks_create',
  'POST /v1/webhooks/:webhookId/update': 'service_webhooks_update',
  'POST /v1/webhooks/:webhookId/revoke': 'service_webhooks_revoke',
  'POST /v1/webhooks/:webhookId/rotate': 'service_webhooks_rotate',
  'GET /v1/webhooks/:webhookId/deliveries': 'service_deliveries_list',
  'POST /v1/webhooks/:webhookId/deliveries/:deliveryId/replay': 'service_deliveries_replay',
};

/** Routes that have no MCP tool, and why (a test checks that every public route is one or the other). */
export const NOT_OFFERED: Record<string, string> = {
  'GET /v1/jobs/:jobId/stream': 'server-sent events; poll service_jobs_get instead',
};

type JsonSchema = Record<string, unknown>;

export interface McpTool {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  /** The JSON Schema of a successful result's structuredContent (the REST success body). */
  outputSchema: JsonSchema & { type: 'object' };
  annotations: ToolAnnotations;
  method: 'GET' | 'POST' | 'DELETE';
  url: string;
  pathParams: string[];
  queryParams: string[];
  bodyParams: string[];
  /**
   * Whether the tool takes `idempotencyKey` (the REST Idempotency-Key header): optional on runs and
   * retries (the MCP endpoint draws one when it is missing and returns it), required by the lookup.
   */
  idempotencyKey: 'none' | 'optional' | 'required';
  upload: boolean;
  /** The scope the REST route needs (tools/list shows a key only the tools its scopes allow). */
  scope: string | undefined;
  /** A per-operation run tool (operation-tools.ts): its arguments other than workspaceId and idempotencyKey are the input. */
  operationId?: string;
  asynchronous?: boolean;
}

/** A plain JSON copy of a TypeBox schema (its symbol-keyed metadata dropped). */
function plain(schema: unknown): JsonSchema | undefined {
  return schema === undefined ? undefined : (JSON.parse(JSON.stringify(schema)) as JsonSchema);
}

/** The properties and required names of an object schema, also through allOf (TypeBox Intersect). */
function objectParts(schema: JsonSchema | undefined): { properties: Record<string, JsonSchema>; required: string[] } {
  const out = { properties: {} as Record<string, JsonSchema>, required: [] as string[] };
  if (!schema) return out;
  for (const part of Array.isArray(schema.allOf) ? (schema.allOf as JsonSchema[]) : [schema]) {
    Object.assign(out.properties, (part.properties as Record<string, JsonSchema> | undefined) ?? {});
    out.required.push(...((part.required as string[] | undefined) ?? []));
  }
  return out;
}

const WORKSPACE_ID: JsonSchema = { type: 'string', format: 'uuid', description: 'The workspace to act in (the REST X-Service-Workspace header).' };
const IDEMPOTENCY_KEY: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  description:
    'Idempotency-Key (1 to 128 characters). Optional: without one the server draws a key and returns it as idempotencyKey in the result. ' +
    'Calling again with the same key and arguments returns the first answer and spends nothing more; choose your own key (a UUID) when the answer might get lost, then find the job with service_runs_lookup.',
};
const LOOKUP_KEY: JsonSchema = { type: 'string', minLength: 1, maxLength: 128, description: 'The Idempotency-Key a run or retry of this API key used in this workspace (last 24 hours).' };

/** Routes that use the Idempotency-Key header only to find a past request. */
const LOOKUP_ROUTES = new Set(['GET /v1/runs/lookup']);

function describe(route: RouteEntry): string {
  const schema = route.schema ?? {};
  const meta = route.meta!;
  const points = typeof meta.points === 'number' ? `${meta.points} usage point${meta.points === 1 ? '' : 's'}` : 'the operation’s usage points';
  const summary = typeof schema.summary === 'string' ? schema.summary : `${route.method} ${route.url}`;
  return `${summary}. Same as ${route.method} ${route.url}: scope ${meta.scope ?? 'none'}, costs ${points}. The result is the REST response body.`;
}

/**
 * The schema of the route's success bodies (200 and 202, which runs and retries share), as the
 * route serializes them: a tool's structuredContent is that body, so it always fits.
 */
function successSchema(route: RouteEntry, name: string): JsonSchema & { type: 'object' } {
  const responses = (route.schema?.response ?? {}) as Record<string, unknown>;
  const bodies = [...new Set(Object.entries(responses).filter(([status]) => status.startsWith('2')).map(([, schema]) => JSON.stringify(plain(schema))))].map(
    (text) => JSON.parse(text) as JsonSchema,
  );
  if (bodies.length === 0) throw new Error(`MCP tool ${name}: the route declares no success response schema`);
  if (bodies.length === 1 && bodies[0]!.type === 'object') return bodies[0] as JsonSchema & { type: 'object' };
  return { type: 'object', anyOf: bodies };
}

const NEXT_STEP: JsonSchema = {
  type: 'object',
  description: 'Present when the job failed: its errorCode and what to do next.',
  properties: {
    errorCode: { type: 'string' },
    action: { type: 'string', enum: ['retry', 'wait_and_retry', 'change_input', 'add_credits', 'raise_budget', 'ask_operator', 'use_new_idempotency_key', 'none'] },
    advice: { type: 'string' },
  },
  required: ['errorCode', 'action', 'advice'],
};

/**
 * The success body as a tool returns it (results.ts): `nextStep` when it reports a failed job, and
 * on runs and retries the Idempotency-Key the call used (drawn by the server when it had none).
 */
function withResultExtras(schema: JsonSchema & { type: 'object' }, idempotencyKey: boolean): JsonSchema & { type: 'object' } {
  const extras: Record<string, JsonSchema> = { nextStep: NEXT_STEP };
  if (idempotencyKey) extras.idempotencyKey = { type: 'string', description: 'The Idempotency-Key this call used: repeat the call with it to get the same answer without spending again.' };
  if (schema.anyOf) return { ...schema, properties: extras };
  return { ...schema, properties: { ...(schema.properties as JsonSchema), ...extras } };
}

function toolFor(route: RouteEntry, name: string): McpTool {
  const schema = route.schema ?? {};
  const path = objectParts(plain(schema.params));
  const query = objectParts(plain(schema.querystring));
  const headers = objectParts(plain(schema.headers));
  const upload = route.url === '/v1/media/upload';
  const body = upload ? { properties: {}, required: [] } : objectParts(plain(schema.body));
  const idempotencyKey: McpTool['idempotencyKey'] = !('idempotency-key' in headers.properties)
    ? 'none'
    : LOOKUP_ROUTES.has(`${route.method} ${route.url}`)
      ? 'required'
      : 'optional';
  const properties: Record<string, JsonSchema> = { workspaceId: WORKSPACE_ID };
  const required = ['workspaceId'];
  const add = (parts: { properties: Record<string, JsonSchema>; required: string[] }) => {
    for (const [key, value] of Object.entries(parts.properties)) {
      if (key in properties) throw new Error(`MCP tool ${name}: input "${key}" appears twice`);
      properties[key] = value;
    }
    required.push(...parts.required);
  };
  add(path);
  add(query);
  add(body);
  if (idempotencyKey === 'optional') add({ properties: { idempotencyKey: IDEMPOTENCY_KEY }, required: [] });
  if (idempotencyKey === 'required') add({ properties: { idempotencyKey: LOOKUP_KEY }, required: ['idempotencyKey'] });
  if (upload) {
    add({
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 255, description: 'File name of the media item.' },
        mimeType: { type: 'string', minLength: 1, maxLength: 255, description: 'Declared type; the content must match it (as a REST upload).' },
        dataBase64: { type: 'string', minLength: 1, maxLength: MCP_UPLOAD_MAX_BASE64, contentEncoding: 'base64', description: `The file, base64-encoded: at most ${MCP_UPLOAD_MAX_BASE64} characters. Larger files: REST multipart upload, then pass the media id.` },
      },
      required: ['name', 'mimeType', 'dataBase64'],
    });
  }
  const annotations = routeToolAnnotations(name);
  if (!annotations) throw new Error(`MCP tool ${name}: no title and hints in tool-annotations.ts`);
  return {
    name,
    title: annotations.title,
    description: describe(route),
    inputSchema: { type: 'object', properties, required: [...new Set(required)], additionalProperties: false },
    outputSchema: withResultExtras(successSchema(route, name), idempotencyKey === 'optional'),
    annotations,
    method: route.method as McpTool['method'],
    url: route.url,
    pathParams: Object.keys(path.properties),
    queryParams: Object.keys(query.properties),
    bodyParams: Object.keys(body.properties),
    idempotencyKey,
    upload,
    scope: route.meta?.scope,
  };
}

/** The tools of the public key routes of an app (listRoutes), in a stable order. */
export function buildTools(routes: RouteEntry[]): McpTool[] {
  const tools: McpTool[] = [];
  for (const route of routes) {
    if (route.meta?.auth !== 'key' || !route.url.startsWith('/v1/')) continue;
    const name = TOOL_NAMES[`${route.method} ${route.url}`];
    if (name) tools.push(toolFor(route, name));
  }
  // Runs and retries may be followed as MCP tasks, whose result is the job snapshot (tasks.ts):
  // their structuredContent is either body.
  const job = tools.find((t) => t.name === 'service_jobs_get');
  for (const tool of tools) {
    if (job && (tool.name === 'service_runs_create' || tool.name === 'service_jobs_retry')) {
      const own = tool.outputSchema.properties as Record<string, JsonSchema>;
      const extras = { nextStep: own.nextStep!, idempotencyKey: own.idempotencyKey! };
      tool.outputSchema = { type: 'object', properties: extras, anyOf: [tool.outputSchema, job.outputSchema] };
      tool.description += ' As an MCP task, the task result is the job snapshot (as service_jobs_get answers it).';
    }
  }
  return tools.sort((a, b) => a.name.localeCompare(b.name));
}

/** The public routes that have neither a tool nor a reason not to (for the test that keeps the table complete). */
export function routesWithoutTool(routes: RouteEntry[]): string[] {
  return routes
    .filter((r) => r.meta?.auth === 'key' && r.url.startsWith('/v1/'))
    .map((r) => `${r.method} ${r.url}`)
    .filter((k) => !(k in TOOL_NAMES) && !(k in NOT_OFFERED));
}
