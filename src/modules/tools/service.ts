/** The Tool catalog (GET /v1/tools) and estimates (POST /v1/estimates): input validation and prices. */
import type { Deps } from '../../deps.js';
import { AppError } from '../../http/errors.js';
import { compileStrict } from '../../http/validation.js';
import type { OperationContract, Price } from '../../operations/contract.js';
import { findOperation, operationPoints, TOOLS } from '../../operations/registry.js';
import type { OperationRoute } from '../../providers/types.js';
import { forbiddenOperation } from '../auth/service.js';
import type { ApiKey } from '../auth/types.js';
import { checkMediaInputs } from '../media/service.js';
import { findDomain } from '../domains/store.js';
import { modeOfScope } from '../../lib/livemode.js';
import { checkVoiceInput, refuseVoiceOnRoute } from '../voices/service.js';

const validators = new WeakMap<object, ReturnType<typeof compileStrict>>();

/**
 * How deeply an operation input may nest. No input schema goes deeper than 3 levels
 * (`/input/edits/0/type`); the bound keeps hostile bodies away from recursive code:
 * structuredClone (and JSON.stringify) overflow the stack on a few thousand nested arrays, which
 * a 1 MiB body holds easily, and that surfaced as a 500 instead of 400 INVALID_INPUT.
 */
export const MAX_INPUT_DEPTH = 32;

/** A JSON pointer segment (RFC 6901). */
function pointerSegment(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Refuses an input nested deeper than MAX_INPUT_DEPTH with 400 INVALID_INPUT pointing at the first
 * value too deep. Iterative, so no input can exhaust the stack here.
 */
function checkInputDepth(input: unknown): void {
  type Node = { value: unknown; depth: number; parent: Node | undefined; key: string };
  const stack: Node[] = [{ value: input, depth: 0, parent: undefined, key: '' }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (value === null || typeof value !== 'object') continue;
    if (node.depth >= MAX_INPUT_DEPTH) {
      const path: string[] = [];
      for (let n: Node | undefined = node; n?.parent; n = n.parent) path.push(pointerSegment(n.key));
      throw new AppError('INVALID_INPUT', {
        details: { errors: [{ pointer: `/input/${path.reverse().join('/')}`, message: `must NOT nest deeper than ${MAX_INPUT_DEPTH} levels` }] },
      });
    }
    for (const key of Object.keys(value)) stack.push({ value: (value as Record<string, unknown>)[key], depth: node.depth + 1, parent: node, key });
  }
}

/** The validator of a route's input schema (the operation's, or the narrower one its adapter honours). */
function validatorFor(route: OperationRoute) {
  let v = validators.get(route.inputSchema);
  if (!v) {
    v = compileStrict(route.inputSchema as object);
    validators.set(route.inputSchema, v);
  }
  return v;
}

/** The tools and operations the key may run, among those this deployment offers (the providers file). */
export function catalog(deps: Deps, key: ApiKey) {
  const mode = key.mode;
  return TOOLS.map((tool) => ({
    slug: tool.slug,
    name: tool.name,
    description: tool.description,
    operations: tool.operations
      .filter((op) => key.operations.includes(op.id) && deps.providers.offers(op.id, mode))
      .map((op) => ({
        operationId: op.id,
        summaryKey: op.summaryKey,
        inputSchema: deps.providers.route(op.id, mode)!.inputSchema as unknown as Record<string, unknown>,
        usagePoints: operationPoints(op.id),
        asynchronous: op.asynchronous,
      })),
  })).filter((tool) => tool.operations.length > 0);
}

/**
 * Where an operation runs in this deployment for work in `workspaceId` (a live workspace or a
 * test twin: lib/livemode.ts); 400 OPERATION_UNAVAILABLE when the providers file maps no provider
 * to it (and does not fall back to the simulated provider).
 */
export function routeFor(deps: Deps, op: OperationContract, workspaceId: string): OperationRoute {
  const route = deps.providers.route(op.id, modeOfScope(workspaceId));
  if (!route) throw new AppError('OPERATION_UNAVAILABLE', { details: { operationId: op.id } });
  return route;
}

/** The name a workspace's own key for the operation's provider is stored under, or null when the route takes none. */
export function personalKeyProvider(deps: Deps, op: OperationContract, workspaceId: string): string | null {
  const route = routeFor(deps, op, workspaceId);
  return route.personalKeys ? route.providerName : null;
}

/**
 * Resolves and checks an operation request: known operation (400 UNKNOWN_OPERATION), allowed for
 * the key (403 FORBIDDEN_OPERATION), offered by this deployment (400 OPERATION_UNAVAILABLE), input valid against its schema (400 INVALID_INPUT with JSON
 * pointers), referenced media present in the workspace with an accepted type, a named voice of
 * this workspace and mode on a route that takes voices (voices/service.ts). Returns the input
 * with schema defaults applied.
 */
export async function checkOperationRequest(
  deps: Deps,
  key: ApiKey,
  workspaceId: string,
  operationId: string,
  input: Record<string, unknown>,
): Promise<{ op: OperationContract; input: Record<string, unknown> }> {
  const op = findOperation(operationId);
  if (!op) throw new AppError('UNKNOWN_OPERATION', { details: { operationId } });
  if (!key.operations.includes(op.id)) throw await forbiddenOperation(deps, key, op.id);
  const route = routeFor(deps, op, workspaceId);
  checkInputDepth(input);
  refuseVoiceOnRoute(op, route, input);
  // A field the route cannot honour as configured is refused saying what to configure (a
  // video.edit prompt on the ffmpeg engine without a chat model), before the schema's generic word.
  const refused = route.adapter.refuseInput?.(op, input) ?? [];
  if (refused.length > 0) throw new AppError('INVALID_INPUT', { details: { errors: refused.map((e) => ({ pointer: `/input${e.pointer}`, message: e.message })) } });
  const copy = structuredClone(input);
  const validate = validatorFor(route);
  if (!validate(copy)) {
    throw new AppError('INVALID_INPUT', {
      details: {
        errors: (validate.errors ?? []).map((e) => ({
          pointer: `/input${e.instancePath}`,
          message: `${e.message ?? 'invalid'}${e.params && 'additionalProperty' in e.params ? `: ${String(e.params.additionalProperty)}` : ''}`,
        })),
      },
    });
  }
  const broken = op.check?.(copy) ?? [];
  if (broken.length > 0) throw new AppError('INVALID_INPUT', { details: { errors: broken.map((e) => ({ pointer: `/input${e.pointer}`, message: e.message })) } });
  await checkMediaInputs(deps, workspaceId, op.mediaFields, copy);
  if (op.verifiedHostField) await checkVerifiedHost(deps, workspaceId, op.verifiedHostField, copy);
  if (op.voiceField) await checkVoiceInput(deps, workspaceId, op, copy);
  return { op, input: copy };
}

/** Estimated and maximum cost at this deployment's prices (the providers file, else the built-in price book). */
/**
 * The hostname of the URL in `field` must be a domain verified in the workspace, exactly (a parent
 * domain does not cover a subdomain; an IP address is never verified): 400 DOMAIN_NOT_VERIFIED.
 */
async function checkVerifiedHost(deps: Deps, workspaceId: string, field: string, input: Record<string, unknown>): Promise<void> {
  let url: URL;
  try {
    url = new URL(String(input[field]));
  } catch {
    // JSON Schema's "uri" lets through what the URL standard refuses (a port past 65535).
    throw new AppError('INVALID_INPUT', { details: { errors: [{ pointer: `/input/${field}`, message: 'must be a URL the WHATWG URL standard can parse' }] } });
  }
  const hostname = url.hostname.toLowerCase().replace(/\.$/, '');
  const domain = await findDomain(deps.db, workspaceId, hostname);
  if (domain?.status !== 'verified') {
    throw new AppError('DOMAIN_NOT_VERIFIED', {
      message: `${hostname} is not a verified domain of this workspace; verify it before scanning it.`,
      details: { pointer: `/input/${field}`, hostname },
    });
  }
}

export function priceOf(deps: Deps, op: OperationContract, input: Record<string, unknown>, workspaceId: string): Price {
  return routeFor(deps, op, workspaceId).price(input);
}

export async function estimate(deps: Deps, key: ApiKey, workspaceId: string, operationId: string, input: Record<string, unknown>) {
  const checked = await checkOperationRequest(deps, key, workspaceId, operationId, input);
  const price = priceOf(deps, checked.op, checked.input, workspaceId);
  return {
    operationId: checked.op.id,
    estimatedCostMillicents: price.estimatedMillicents,
    maximumCostMillicents: price.maximumMillicents,
    usagePoints: operationPoints(checked.op.id),
  };
}

/**
 * The operations the key may run here (catalog), each with its usage points and the price of its
 * typical input at this deployment's prices: what an MCP client is told before it runs one.
 */
export function operationQuotes(deps: Deps, key: ApiKey) {
  return catalog(deps, key).flatMap((tool) =>
    tool.operations.map((op) => {
      const contract = findOperation(op.operationId)!;
      const typical = contract.typicalInput;
      let price: Price | undefined;
      try {
        price = deps.providers.route(contract.id, key.mode)!.price(typical.input);
      } catch {
        price = undefined; // a price function that cannot quote the typical input: no figure rather than a wrong one
      }
      return { ...op, toolName: tool.name, title: contract.title, typical: typical.summary, price };
    }),
  );
}
