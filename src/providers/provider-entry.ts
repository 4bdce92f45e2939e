/**
 * One provider of a providers file (`providers.NAME`): its kind and, for a remote kind, its API
 * base, key, network and call settings. Every problem is named; an entry with one is dropped.
 */
import { isPublicUnicast, parseIpLiteral } from '../egress/address-policy.js';
import { isProviderType, PROVIDER_KINDS, PROVIDER_TYPES } from './kinds.js';
import type { ProviderSpec } from './specs.js';

export type { ProviderSpec } from './specs.js';
import { isObject, wholeNumber } from './file-values.js';
import { Secret } from './secret.js';


export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 2;

/** Fields of a remote provider (an HTTP API). */
const REMOTE_FIELDS = ['baseUrl', 'apiKeyEnv', 'privateNetwork', 'requestTimeoutMs', 'maxRetries'];
const PROVIDER_FIELDS = ['type', 'baseUrl', 'apiKeyEnv', 'privateNetwork', 'mediaInputs', 'requestTimeoutMs', 'maxRetries'];
const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** Validates one provider of the file; undefined when it has a problem (each one is said). */
export function parseProvider(
  name: string,
  raw: unknown,
  env: Record<string, string | undefined>,
  say: (what: string) => void,
): ProviderSpec | undefined {
  const before = { count: 0 };
  const problem = (what: string) => {
    before.count++;
    say(what);
  };
  if (!NAME.test(name)) problem('a provider name is 1 to 32 lowercase letters, digits, "-" or "_", starting with a letter');
  // Built-in route names: personal keys are stored under a provider's name, so no file provider may share one.
  if (name === 'link-preview' || (name === 'simulated' && isObject(raw) && raw.type !== 'simulated')) problem(`"${name}" is the name of a built-in provider`);
  if (!isObject(raw)) {
    problem('must be an object with a "type"');
    return undefined;
  }
  for (const key of Object.keys(raw)) if (!PROVIDER_FIELDS.includes(key)) problem(`unknown field "${key}" (expected ${PROVIDER_FIELDS.join(', ')})`);
  const type = raw.type;
  if (!isProviderType(type)) {
    problem(`unknown type ${JSON.stringify(type)} (expected ${PROVIDER_TYPES.slice(0, -1).join(', ')} or ${PROVIDER_TYPES.at(-1)})`);
    return undefined;
  }
  const kind = PROVIDER_KINDS[type];
  const remote = kind.remote;
  const privateNetwork = raw.privateNetwork ?? false;
  if (typeof privateNetwork !== 'boolean') problem('privateNetwork must be true or false');
  let baseUrl: string | undefined;
  if (remote) {
    baseUrl = checkBaseUrl(raw.baseUrl, privateNetwork === true, problem);
  } else {
    for (const key of [...REMOTE_FIELDS.slice(0, 3), 'mediaInputs', ...REMOTE_FIELDS.slice(3)]) {
      if (key in raw && !kind.providerFields.includes(key)) problem(`"${key}" does not apply to a ${type} provider`);
    }
  }
  let apiKey: Secret | undefined;
  let apiKeyEnv: string | undefined;
  if (raw.apiKeyEnv !== undefined && remote) {
    if (typeof raw.apiKeyEnv !== 'string' || !ENV_NAME.test(raw.apiKeyEnv)) problem('apiKeyEnv must name an environment variable');
    else {
      apiKeyEnv = raw.apiKeyEnv;
      const value = env[apiKeyEnv]?.trim();
      if (!value) problem(`the environment variable ${apiKeyEnv} (apiKeyEnv) is not set`);
      else apiKey = new Secret(value);
    }
  }
  const mediaInputs = raw.mediaInputs ?? 'url';
  if (mediaInputs !== 'url' && mediaInputs !== 'dataUri') problem('mediaInputs must be "url" or "dataUri"');
  else if (raw.mediaInputs !== undefined && !kind.providerFields.includes('mediaInputs')) problem(`mediaInputs applies to ${PROVIDER_TYPES.filter((t) => PROVIDER_KINDS[t].providerFields.includes('mediaInputs')).join(', ')} providers only`);
  const requestTimeoutMs = raw.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  if (!wholeNumber(requestTimeoutMs, 100, 3_600_000)) problem('requestTimeoutMs must be a whole number of milliseconds from 100 to 3600000');
  const maxRetries = raw.maxRetries ?? DEFAULT_MAX_RETRIES;
  if (!wholeNumber(maxRetries, 0, 10)) problem('maxRetries must be a whole number from 0 to 10');
  if (before.count > 0) return undefined;
  return {
    name,
    type,
    ...(baseUrl !== undefined ? { baseUrl } : {}),
    ...(apiKey ? { apiKey, apiKeyEnv } : {}),
    privateNetwork: privateNetwork === true,
    mediaInputs: mediaInputs as 'url' | 'dataUri',
    requestTimeoutMs: requestTimeoutMs as number,
    maxRetries: maxRetries as number,
  };
}

/**
 * An http(s) base URL without credentials, query or fragment. A host that is an IP literal off the
 * public internet, or `localhost`, needs `privateNetwork: true` (host names are resolved and
 * checked at start-up by `checkProviderAddresses`).
 */
function checkBaseUrl(value: unknown, privateNetwork: boolean, problem: (what: string) => void): string | undefined {
  if (typeof value !== 'string') {
    problem('baseUrl is required (an http or https URL)');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    problem(`baseUrl ${JSON.stringify(value)} is not a URL`);
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') problem('baseUrl must be http or https');
  else if (url.username || url.password || url.search || url.hash || value.includes('?') || value.includes('#')) {
    problem('baseUrl must not carry credentials, a query or a fragment');
  } else if (!privateNetwork && isPrivateHost(url.hostname)) {
    problem(`baseUrl ${url.host} is a private or loopback address: set "privateNetwork": true on this provider to allow it`);
  } else return value.replace(/\/+$/, '');
  return undefined;
}

/** True for `localhost` names and IP literals that are not public unicast addresses. */
export function isPrivateHost(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  const ip = parseIpLiteral(host);
  return ip !== null && !isPublicUnicast(ip);
}
