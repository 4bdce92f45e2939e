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
import { inspect } from 'node:util';
import ipaddr from 'ipaddr.js';
import { isPublicUnicast, parseIpLiteral } from '../egress/address-policy.js';
import { isOperationId, type OperationId } from '../operations/ids.js';
import { findOperation } from '../operations/registry.js';
import { parseSize, type ImageSize } from './openai-models.js';
import { PRICE_PARAMS, type PriceParam, type PriceParams } from '../operations/pricing.js';
import { isProviderType, kindsWithField, priceParamsFor, PROVIDER_KINDS, PROVIDER_TYPES, type ProviderType, type RouteField } from './kinds.js';

export type { ProviderType } from './kinds.js';
export type SimulatedMode = 'off' | 'fallback';

/** A provider secret: revealed only by `reveal()`; serialises and inspects as "[secret]". */
export class Secret {
  readonly #value: string;
  constructor(value: string) {
    this.#value = value;
  }
  reveal(): string {
    return this.#value;
  }
  toJSON(): string {
    return '[secret]';
  }
  toString(): string {
    return '[secret]';
  }
  [inspect.custom](): string {
    return '[secret]';
  }
}

export interface ProviderSpec {
  name: string;
  type: ProviderType;
  /** API base (openai, replicate), without a trailing slash. */
  baseUrl?: string;
  /** The operator's key, from the environment variable the file names. */
  apiKey?: Secret;
  apiKeyEnv?: string;
  /** The operator allows this provider on a private or loopback address. */
  privateNetwork: boolean;
  /** How media inputs reach a replicate model: a signed download URL (default) or a data URI. */
  mediaInputs: 'url' | 'dataUri';
  /** Deadline of one HTTP call to the provider (ms). */
  requestTimeoutMs: number;
  /** Retries of one call after 429 or 5xx, inside an attempt. */
  maxRetries: number;
}

export interface OperationRouteSpec {
  operationId: OperationId;
  provider: string;
  model?: string;
  engine?: string;
  /** replicate: the model input, with "{{field}}" strings replaced by input fields. */
  input?: Record<string, unknown>;
  price?: PriceParams;
  /** speech.generate on openai: the voice used when the input names none. */
  voice?: string;
  /** Longest a prediction may run before it is cancelled (the bound of perPredictSecondMillicents). */
  timeoutSeconds: number;
  /** Pause between two polls of a prediction (ms). */
  pollIntervalMs: number;
  /** sprites engine: the provider that draws the frames (one of the file that can make images, or "simulated"). */
  frames?: string;
  /** ffmpeg engine: the longest output (s); longer results are cut there (the bound of perSecondMillicents). */
  maxOutputSeconds: number;
  /** image.generate on openai: the sizes the model generates (replacing the built-in table of model families). */
  sizes?: ImageSize[];
  /** image.generate on openai: the most images one request may ask for (`n`). */
  maxImagesPerRequest?: number;
}

export interface ProvidersFile {
  simulated: SimulatedMode;
  providers: Map<string, ProviderSpec>;
  operations: Map<OperationId, OperationRouteSpec>;
}

export const DEFAULT_REQUEST_TIMEOUT_MS = 120_000;
export const DEFAULT_MAX_RETRIES = 2;
export const DEFAULT_PREDICTION_TIMEOUT_S = 600;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
export const DEFAULT_MAX_OUTPUT_SECONDS = 600;
/**
 * Largest price parameter (millicents per unit). With the largest quantity an input can ask for
 * (about 12.8 million chat input tokens: 100 messages of 32,000 four-byte characters) a maximum
 * stays far below Number.MAX_SAFE_INTEGER.
 */
export const MAX_PRICE_PARAMETER = 100_000_000;

/** Fields of a remote provider (an HTTP API). */
const REMOTE_FIELDS = ['baseUrl', 'apiKeyEnv', 'privateNetwork', 'requestTimeoutMs', 'maxRetries'];
const PROVIDER_FIELDS = ['type', 'baseUrl', 'apiKeyEnv', 'privateNetwork', 'mediaInputs', 'requestTimeoutMs', 'maxRetries'];
const OPERATION_FIELDS = ['provider', 'model', 'engine', 'input', 'price', 'voice', 'timeoutSeconds', 'pollIntervalMs', 'frames', 'maxOutputSeconds', 'sizes', 'maxImagesPerRequest'];
/** Bounds of an entry's own image sizes (`sizes`): sides in pixels, and how many sizes. */
const IMAGE_SIDE = { min: 16, max: 4096 } as const;
const MAX_SIZES = 32;
const NAME = /^[a-z][a-z0-9_-]{0,31}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const TEMPLATE = /^\{\{([A-Za-z][A-Za-z0-9]*)\}\}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

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

function wholeNumber(v: unknown, min: number, max: number): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v >= min && v <= max;
}

function parseProvider(
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

function parseRoute(
  opId: string,
  raw: unknown,
  providers: Map<string, ProviderSpec>,
  rawProviders: Record<string, unknown>,
  say: (what: string) => void,
): OperationRouteSpec | undefined {
  if (!isOperationId(opId)) {
    say('not an operation (known: the fourteen operationIds of GET /v1/tools)');
    return undefined;
  }
  if (opId === 'link.preview') {
    say('link.preview always runs on the built-in fetcher and takes no entry');
    return undefined;
  }
  if (!isObject(raw)) {
    say('must be an object with a "provider"');
    return undefined;
  }
  let failed = false;
  const problem = (what: string) => {
    failed = true;
    say(what);
  };
  for (const key of Object.keys(raw)) if (!OPERATION_FIELDS.includes(key)) problem(`unknown field "${key}" (expected ${OPERATION_FIELDS.join(', ')})`);
  const providerName = raw.provider;
  let spec: ProviderSpec | undefined;
  let type: ProviderType | undefined;
  if (typeof providerName !== 'string') problem('provider must name a provider of the file (or "simulated")');
  else if (providers.has(providerName)) {
    spec = providers.get(providerName)!;
    type = spec.type;
  } else if (providerName === 'simulated') type = 'simulated';
  else if (Object.hasOwn(rawProviders, providerName)) failed = true; // its own problems are listed
  else problem(`provider "${providerName}" is not declared in "providers"`);
  const op = findOperation(opId)!;
  if (type) checkServes(type, opId, raw.engine, problem);
  const model = raw.model;
  const frames = checkFrames(raw, type, providers, rawProviders, problem);
  // The sprites engine draws its frames on another provider: model and template are that provider's.
  const drawing = frames !== undefined && frames !== 'simulated' ? providers.get(frames) : undefined;
  const modelType = drawing ? drawing.type : type;
  const modelRule = modelType ? PROVIDER_KINDS[modelType].model : undefined;
  if (modelRule) {
    if (typeof model !== 'string' || model.length === 0 || model.length > 200) problem('model is required (the provider\'s model name)');
    else if (modelRule.pattern && !modelRule.pattern.test(model)) problem(modelRule.patternProblem ?? 'model is not a model name of this provider');
  } else if (type !== undefined && model !== undefined) problem(`model does not apply to a ${type} provider`);
  if (raw.input !== undefined && type !== undefined) {
    if (!applies(modelType!, 'input', opId)) problem(`input (a model input template) applies to ${kindsWithField('input').join(', ')} providers only`);
    else if (!isObject(raw.input)) problem('input must be an object (the model input)');
    // A frame is drawn as an image.generate request (prompt, width, height, count).
    else checkTemplate(raw.input, (drawing ? findOperation('image.generate')! : op).inputSchema as { properties?: Record<string, unknown> }, problem);
  }
  if (raw.voice !== undefined && type !== undefined && (!applies(type, 'voice', opId) || typeof raw.voice !== 'string' || raw.voice.length === 0)) {
    problem('voice applies to speech.generate on an openai provider and must be a voice name');
  }
  const timeoutSeconds = raw.timeoutSeconds ?? DEFAULT_PREDICTION_TIMEOUT_S;
  if (!wholeNumber(timeoutSeconds, 1, 86_400)) problem('timeoutSeconds must be a whole number of seconds from 1 to 86400');
  const pollIntervalMs = raw.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  if (!wholeNumber(pollIntervalMs, 10, 60_000)) problem('pollIntervalMs must be a whole number of milliseconds from 10 to 60000');
  const maxOutputSeconds = raw.maxOutputSeconds ?? DEFAULT_MAX_OUTPUT_SECONDS;
  if (raw.maxOutputSeconds !== undefined && raw.engine !== 'ffmpeg') problem('maxOutputSeconds applies to the ffmpeg engine only');
  else if (!wholeNumber(maxOutputSeconds, 1, 86_400)) problem('maxOutputSeconds must be a whole number of seconds from 1 to 86400');
  const price = checkPrice(raw.price, opId, type, problem);
  const images = checkImageSizes(raw, opId, type, problem);
  if (failed || !type) return undefined;
  return {
    operationId: opId,
    provider: providerName as string,
    ...(typeof model === 'string' ? { model } : {}),
    ...(typeof raw.engine === 'string' ? { engine: raw.engine } : {}),
    ...(isObject(raw.input) ? { input: raw.input } : {}),
    ...(price ? { price } : {}),
    ...(typeof raw.voice === 'string' ? { voice: raw.voice } : {}),
    timeoutSeconds: timeoutSeconds as number,
    pollIntervalMs: pollIntervalMs as number,
    ...(frames !== undefined ? { frames } : {}),
    maxOutputSeconds: maxOutputSeconds as number,
    ...(images.sizes ? { sizes: images.sizes } : {}),
    ...(images.maxImagesPerRequest !== undefined ? { maxImagesPerRequest: images.maxImagesPerRequest } : {}),
  };
}

/**
 * `sizes` and `maxImagesPerRequest`: what an image model accepts, for image.generate on an openai
 * provider (a model the built-in table of docs/providers.md does not know, or one that differs).
 */
function checkImageSizes(
  raw: Record<string, unknown>,
  opId: OperationId,
  type: ProviderType | undefined,
  problem: (what: string) => void,
): { sizes?: ImageSize[]; maxImagesPerRequest?: number } {
  const out: { sizes?: ImageSize[]; maxImagesPerRequest?: number } = {};
  if (raw.sizes === undefined && raw.maxImagesPerRequest === undefined) return out;
  if (type !== undefined && !applies(type, 'sizes', opId)) {
    problem('sizes and maxImagesPerRequest apply to image.generate on an openai provider only');
    return out;
  }
  if (raw.sizes !== undefined) {
    const list = raw.sizes;
    if (!Array.isArray(list) || list.length === 0 || list.length > MAX_SIZES) problem(`sizes must be a list of 1 to ${MAX_SIZES} sizes "WIDTHxHEIGHT"`);
    else {
      const sizes: ImageSize[] = [];
      for (const [i, v] of list.entries()) {
        const s = typeof v === 'string' ? parseSize(v) : undefined;
        if (!s || s.width < IMAGE_SIDE.min || s.height < IMAGE_SIDE.min || s.width > IMAGE_SIDE.max || s.height > IMAGE_SIDE.max) {
          problem(`sizes[${i}]: ${JSON.stringify(v)} is not a size "WIDTHxHEIGHT" with sides from ${IMAGE_SIDE.min} to ${IMAGE_SIDE.max} pixels`);
        } else if (sizes.some((o) => o.width === s.width && o.height === s.height)) problem(`sizes[${i}]: ${JSON.stringify(v)} is listed twice`);
        else sizes.push(s);
      }
      if (sizes.length === list.length) out.sizes = sizes;
    }
  }
  if (raw.maxImagesPerRequest !== undefined) {
    if (!wholeNumber(raw.maxImagesPerRequest, 1, 10)) problem('maxImagesPerRequest must be a whole number from 1 to 10');
    else out.maxImagesPerRequest = raw.maxImagesPerRequest;
  }
  return out;
}

/**
 * The sprites engine's `frames`: "simulated", or a provider of the file that can make images
 * (openai, replicate); its `model` is then the model that draws them.
 */
function checkFrames(
  raw: Record<string, unknown>,
  type: ProviderType | undefined,
  providers: Map<string, ProviderSpec>,
  rawProviders: Record<string, unknown>,
  problem: (what: string) => void,
): string | undefined {
  const value = raw.frames;
  if (raw.engine !== 'sprites') {
    if (value !== undefined) problem('frames applies to the sprites engine only');
    return undefined;
  }
  if (type === undefined || !applies(type, 'engine', 'sprite.generate')) return undefined;
  if (value === undefined) return 'simulated';
  if (typeof value !== 'string') {
    problem('frames must name the provider that draws the frames (a provider of the file that can make images, or "simulated")');
    return undefined;
  }
  if (value === 'simulated') return value;
  const spec = providers.get(value);
  if (!spec) {
    if (!Object.hasOwn(rawProviders, value)) problem(`frames: provider "${value}" is not declared in "providers"`);
    return undefined;
  }
  if (!PROVIDER_KINDS[spec.type].drawsImages) {
    problem(`frames: provider "${value}" cannot make images (an openai or replicate provider, or "simulated")`);
    return undefined;
  }
  return spec.type === 'simulated' ? 'simulated' : value;
}

function checkServes(type: ProviderType, opId: OperationId, engine: unknown, problem: (what: string) => void): void {
  if (!applies(type, 'engine', opId) && engine !== undefined) problem(`engine applies to ${kindsWithField('engine').join(', ')} providers only`);
  const refusal = PROVIDER_KINDS[type].refusal(opId, engine);
  if (refusal) problem(refusal);
}

/** The route field applies to `opId` on a provider of kind `type`. */
function applies(type: ProviderType, field: RouteField, opId: OperationId): boolean {
  return PROVIDER_KINDS[type].routeFields[field]?.(opId) ?? false;
}

/** Every "{{field}}" in the template names a property of the operation's input. */
function checkTemplate(template: unknown, schema: { properties?: Record<string, unknown> }, problem: (what: string) => void, path = 'input'): void {
  if (typeof template === 'string') {
    const m = TEMPLATE.exec(template);
    if (m && !Object.hasOwn(schema.properties ?? {}, m[1]!)) problem(`${path}: "{{${m[1]}}}" is not a field of the operation's input`);
    else if (!m && template.includes('{{')) problem(`${path}: a template string is exactly "{{field}}"`);
  } else if (Array.isArray(template)) template.forEach((v, i) => checkTemplate(v, schema, problem, `${path}[${i}]`));
  else if (isObject(template)) for (const [k, v] of Object.entries(template)) checkTemplate(v, schema, problem, `${path}.${k}`);
}

function checkPrice(raw: unknown, opId: OperationId, type: ProviderType | undefined, problem: (what: string) => void): PriceParams | undefined {
  if (raw === undefined) {
    if (type && PROVIDER_KINDS[type].priceRequired) problem('price is required for a real provider (millicents; see docs/providers.md)');
    return undefined;
  }
  if (!isObject(raw) || Object.keys(raw).length === 0) {
    problem('price must be an object with at least one price parameter');
    return undefined;
  }
  const allowed = type ? priceParamsFor(opId, type) : PRICE_PARAMS;
  const price: PriceParams = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!(PRICE_PARAMS as readonly string[]).includes(key)) problem(`price.${key} is not a price parameter (known: ${PRICE_PARAMS.join(', ')})`);
    else if (!allowed.includes(key as PriceParam)) problem(`price.${key} does not apply to ${opId}${type ? ` on a ${type} provider` : ''} (applicable: ${allowed.join(', ')})`);
    else if (!wholeNumber(value, 0, MAX_PRICE_PARAMETER)) problem(`price.${key} must be a whole number of millicents from 0 to ${MAX_PRICE_PARAMETER}`);
    else price[key as PriceParam] = value;
  }
  return price;
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
