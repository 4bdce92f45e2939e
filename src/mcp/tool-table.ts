/**
 * The tools a key sees and calls: the route tools (tools.ts), service_runs_create with the key's
 * operations, and one run tool per operation (operation-tools.ts), each with the validator of its
 * arguments. Built once per process from the route catalog; what depends on the key is computed
 * per request.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { RouteEntry } from '../http/route-catalogue.js';
import type { Deps } from '../deps.js';
import { compileStrict } from '../http/validation.js';
import type { ApiKey } from '../modules/auth/types.js';
import { catalog } from '../modules/tools/service.js';
import { OPERATION_IDS } from '../operations/ids.js';
import { operationToolName, operationTools, runsToolForKey } from './operation-tools.js';
import type { ReplayedAnswer } from './results.js';
import { buildTools, type McpTool } from './tools.js';

export type Validator = ReturnType<typeof compileStrict>;

/** Tools that may run as an MCP task: those whose call makes a job (runs and retries). */
export function taskCapable(tool: McpTool): boolean {
  return tool.operationId !== undefined || tool.name === 'service_runs_create' || tool.name === 'service_jobs_retry';
}

/** A tool call's outcome: the REST answer, or a tool error when the call never reached the route. */
export type ToolOutcome = { early: CallToolResult; answer?: undefined } | { early?: undefined; answer: ReplayedAnswer };

export interface ToolTable {
  list: McpTool[];
  byName: Map<string, { tool: McpTool; validate: Validator }>;
  /** Per-operation tool name → a call entry for it (every operation: a key that may not run it gets REST's refusal). */
  operations: Map<string, { tool: McpTool; validate: Validator }>;
  /** service_runs_create's validators by the list of operations a key may run (few distinct lists). */
  runsValidators: Map<string, Validator>;
}

/** What a per-operation tool call must carry besides the input: the REST run checks the input itself. */
const OPERATION_CALL_SCHEMA = {
  type: 'object',
  properties: { workspaceId: { type: 'string', format: 'uuid' }, idempotencyKey: { type: 'string', minLength: 1, maxLength: 128 } },
  required: ['workspaceId'],
  additionalProperties: true,
};

export function buildToolTable(routes: RouteEntry[]): ToolTable {
  const list = buildTools(routes);
  const byName = new Map(list.map((tool) => [tool.name, { tool, validate: compileStrict(tool.inputSchema) }]));
  const runs = byName.get('service_runs_create')!.tool;
  const validate = compileStrict(OPERATION_CALL_SCHEMA);
  const operations = new Map(
    OPERATION_IDS.map((id) => [operationToolName(id), { tool: { ...runs, name: operationToolName(id), operationId: id }, validate }]),
  );
  return { list, byName, operations, runsValidators: new Map() };
}

/**
 * The tool called and the validator of its arguments. service_runs_create is checked against the
 * schema the key was shown (operationId one of its operations), like every other tool's
 * arguments; a per-operation tool's input is checked by the run itself.
 */
export function findTool(deps: Deps, key: ApiKey, table: ToolTable, name: string) {
  if (name !== 'service_runs_create') return table.byName.get(name) ?? table.operations.get(name);
  const runs = table.byName.get(name)!.tool;
  const ids = catalog(deps, key).flatMap((tool) => tool.operations.map((op) => op.operationId as string));
  const cacheKey = ids.join(',');
  let validate = table.runsValidators.get(cacheKey);
  if (!validate) {
    validate = compileStrict(runsToolForKey(runs, ids).inputSchema);
    table.runsValidators.set(cacheKey, validate);
  }
  return { tool: runs, validate };
}

/**
 * The tools a key sees: the route tools its scopes allow, with service_runs_create's operationId
 * listing the operations it may run here, and one run tool per such operation.
 */
export function listedTools(deps: Deps, key: ApiKey, table: ToolTable): McpTool[] {
  const allowed = table.list.filter((t) => t.scope === undefined || (key.scopes as string[]).includes(t.scope));
  const runs = allowed.find((t) => t.name === 'service_runs_create');
  if (!runs) return allowed;
  const perOperation = operationTools(deps, key, runs);
  const withEnum = runsToolForKey(runs, perOperation.map((t) => t.operationId!));
  return [...allowed.map((t) => (t === runs ? withEnum : t)), ...perOperation].sort((a, b) => a.name.localeCompare(b.name));
}
