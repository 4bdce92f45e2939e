/**
 * One MCP tool per operation the key may run in this deployment (`service_run_image_generate` …),
 * beside the generic service_runs_create. Its input schema is the operation's own (as GET
 * /v1/tools serves it, so narrowed where the provider honours less) plus `workspaceId` and the
 * optional `idempotencyKey`; its description states the usage points and the estimated and
 * maximum cost of a typical input at this deployment's prices. A call is the REST run of that
 * operation: `POST /v1/runs {operationId, input}` with the other arguments as `input`, so the
 * input is checked by the run itself (400 INVALID_INPUT with JSON pointers under /input), never
 * by a second copy of the rules here.
 */
import type { Deps } from '../deps.js';
import type { ApiKey } from '../modules/auth/types.js';
import { operationQuotes } from '../modules/tools/service.js';
import { operationToolAnnotations } from './tool-annotations.js';
import type { McpTool } from './tools.js';

type JsonSchema = Record<string, unknown>;

/** The tool name of an operation: `image.generate` → `service_run_image_generate`. */
export function operationToolName(operationId: string): string {
  return `service_run_${operationId.replace(/[.-]/g, '_')}`;
}

/** Millicents in words an agent can weigh: `2,000 millicents (2 cents)`. */
export function formatMillicents(mc: number): string {
  const cents = mc / 1000;
  const centsText = Number.isInteger(cents) ? String(cents) : cents.toFixed(3).replace(/0+$/, '');
  return `${mc.toLocaleString('en-US')} millicents (${centsText} cent${cents === 1 ? '' : 's'})`;
}

/**
 * The per-operation tools of a key. `runs` is the service_runs_create tool, whose route, output
 * schema and idempotency handling they share.
 */
export function operationTools(deps: Deps, key: ApiKey, runs: McpTool): McpTool[] {
  return operationQuotes(deps, key).map((op) => {
    const schema = op.inputSchema as JsonSchema;
    const own = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const reserved of ['workspaceId', 'idempotencyKey']) {
      if (reserved in own) throw new Error(`operation ${op.operationId}: input "${reserved}" clashes with the MCP tool arguments`);
    }
    const runsProperties = runs.inputSchema.properties as Record<string, JsonSchema>;
    const inputSchema = {
      ...schema,
      type: 'object' as const,
      properties: { workspaceId: runsProperties.workspaceId!, ...own, idempotencyKey: runsProperties.idempotencyKey! },
      required: ['workspaceId', ...((schema.required as string[] | undefined) ?? [])],
      additionalProperties: false,
    };
    const title = op.title;
    const price = op.price
      ? `A typical input (${op.typical}) is estimated at ${formatMillicents(op.price.estimatedMillicents)} and costs at most ${formatMillicents(op.price.maximumMillicents)}, which is reserved from the workspace credits when the run starts; service_estimates_create quotes your exact input.`
      : 'service_estimates_create quotes the cost of your input.';
    const mode = op.asynchronous
      ? 'Queued: the call returns a job (kind "job") at once, or an MCP task when the client asks for one; follow it with service_jobs_get or tasks/get.'
      : 'Synchronous: the result comes back in this call.';
    return {
      ...runs,
      name: operationToolName(op.operationId),
      title,
      description:
        `${title} (${op.toolName}; operation ${op.operationId}). The arguments are the operation's input plus workspaceId and an optional idempotencyKey. ` +
        `${mode} Costs ${op.usagePoints} usage points per run. ${price} Same as POST /v1/runs with operationId "${op.operationId}": scope tools:run.`,
      inputSchema,
      annotations: operationToolAnnotations(title),
      operationId: op.operationId,
      asynchronous: op.asynchronous,
    };
  });
}

/** service_runs_create as the key sees it: `operationId` lists the operations it may run here. */
export function runsToolForKey(runs: McpTool, operationIds: string[]): McpTool {
  const properties = runs.inputSchema.properties as Record<string, JsonSchema>;
  return {
    ...runs,
    inputSchema: { ...runs.inputSchema, properties: { ...properties, operationId: { ...properties.operationId, enum: operationIds } } },
  };
}
