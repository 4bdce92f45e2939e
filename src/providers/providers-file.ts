/**
 * The providers file (decisions.md section 5): which provider does each operation's work, with
 * which model and at which prices. Read and validated once at start-up; every problem is listed
 * together (ConfigError, exit 78). Secrets never live in the file: it names environment variables,
 * read here into `Secret` values that print as "[secret]" wherever they end up (logs, JSON).
 *
 * Invariant: a `ProvidersFile` returned by `parseProvidersFile` is complete and consistent: every
 * operation names a declared provider that can serve it, every price parameter applies to its
 * operation, every template names a field of the operation's input, every named secret is set.
 */
import { readFileSync } from 'node:fs';
import ipaddr from 'ipaddr.js';
import { isPublicUnicast, parseIpLiteral } from '../egress/address-policy.js';
import type { OperationId } from '../operations/ids.js';
import { isObject } from './file-values.js';
import { parseProvider, type ProviderSpec } from './provider-entry.js';
import { parseRoute, type OperationRouteSpec } from './route-entry.js';

export type { ProviderType, ProvidersFile, SimulatedMode } from './specs.js';
import type { ProvidersFile, SimulatedMode } from './specs.js';
export { Secret } from './secret.js';
export { DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT_MS, isPrivateHost, type ProviderSpec } from './provider-entry.js';
export { DEFAULT_MAX_OUTPUT_SECONDS, DEFAULT_POLL_INTERVAL_MS, DEFAULT_PREDICTION_TIMEOUT_S, MAX_PRICE_PARAMETER, type OperationRouteSpec } from './route-entry.js';
/** Reads and validates the file at `path`; throws the list of problems. */
export function loadProvidersFile(path: string, env: Record<string, string | undefined>): { file?: ProvidersFile; problems: string[] } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { problems: [`PROVIDERS_FILE: cannot read "${path}" (${(err as NodeJS.ErrnoException).code ?? 'error'})`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    // Only where, never what: the parser's message quotes the file, which may hold a pasted key.
    const at = /position (\d+)/.exec((err as Error).message)?.[1];
    return { problems: [`PROVIDERS_FILE: "${path}" is not valid JSON${at ? ` (at character ${at})` : ''}`] };
  }
  return parseProvidersFile(json, env);
}

/** Validates a parsed providers file; every problem is named with its place in the file. */
export function parseProvidersFile(json: unknown, env: Record<string, string | undefined>): { file?: ProvidersFile; problems: string[] } {
  const problems: string[] = [];
  const say = (where: string, what: string) => problems.push(`PROVIDERS_FILE ${where}: ${what}`);
  if (!isObject(json)) return { problems: ['PROVIDERS_FILE: the file must hold a JSON object'] };
  for (const key of Object.keys(json)) {
    if (!['simulated', 'providers', 'operations'].includes(key)) say(key, 'unknown field (expected simulated, providers, operations)');
  }
  const simulated = json.simulated === undefined ? 'off' : json.simulated;
  if (simulated !== 'off' && simulated !== 'fallback') say('simulated', `must be "off" or "fallback" (got ${JSON.stringify(simulated)})`);

  const providers = new Map<string, ProviderSpec>();
  const rawProviders = json.providers === undefined ? {} : json.providers;
  if (!isObject(rawProviders)) say('providers', 'must be an object of named providers');
  else {
    for (const [name, raw] of Object.entries(rawProviders)) {
      const spec = parseProvider(name, raw, env, (what) => say(`providers.${name}`, what));
      if (spec) providers.set(name, spec);
    }
  }

  const operations = new Map<OperationId, OperationRouteSpec>();
  const rawOperations = json.operations === undefined ? {} : json.operations;
  if (!isObject(rawOperations)) say('operations', 'must be an object keyed by operationId');
  else {
    for (const [opId, raw] of Object.entries(rawOperations)) {
      const where = `operations.${opId}`;
      const route = parseRoute(opId, raw, providers, isObject(rawProviders) ? rawProviders : {}, (what) => say(where, what));
      if (route) operations.set(route.operationId, route);
    }
  }
  if (problems.length > 0) return { problems };
  return { file: { simulated: simulated as SimulatedMode, providers, operations }, problems };
}

/**
 * Host names of providers without `privateNetwork` must resolve to public addresses only
 * (IP literals were checked when the file was read). Problems in the providers-file format.
 */
export async function checkProviderAddresses(file: ProvidersFile, lookup: (host: string) => Promise<string[]>): Promise<string[]> {
  const problems: string[] = [];
  for (const spec of file.providers.values()) {
    if (!spec.baseUrl || spec.privateNetwork) continue;
    const host = new URL(spec.baseUrl).hostname;
    if (parseIpLiteral(host.replace(/^\[|\]$/g, ''))) continue;
    let addresses: string[];
    try {
      addresses = await lookup(host);
    } catch {
      // A name that does not resolve now may resolve later; each call is checked again by the egress guard.
      continue;
    }
    const off = addresses.filter((a) => ipaddr.isValid(a) && !isPublicUnicast(ipaddr.parse(a)));
    if (off.length > 0) {
      problems.push(`PROVIDERS_FILE providers.${spec.name}: ${host} resolves to ${off.join(', ')} (private or loopback): set "privateNetwork": true on this provider to allow it`);
    }
  }
  return problems;
}
