/**
 * One operation's entry of a providers file (`operations.OPERATION_ID`): the provider that serves
 * it (checked against what its kind serves), the model, the model input template, the prices
 * (only the parameters that apply to the operation on that kind), and the settings of its kind.
 * Every problem is named; an entry with one is dropped.
 */
import { isOperationId, type OperationId } from '../operations/ids.js';
import { findOperation } from '../operations/registry.js';
import { PRICE_PARAMS, type PriceParam, type PriceParams } from '../operations/pricing.js';
import { parseSize, type ImageSize } from './openai-models.js';
import { kindsWithField, priceParamsFor, PROVIDER_KINDS, type RouteField } from './kinds.js';
import { isObject, wholeNumber } from './file-values.js';
import { parseTemplate } from './input-template.js';
import type { OperationRouteSpec, ProviderSpec, ProviderType } from './specs.js';

export type { OperationRouteSpec } from './specs.js';


export const DEFAULT_PREDICTION_TIMEOUT_S = 600;
export const DEFAULT_POLL_INTERVAL_MS = 1000;
export const DEFAULT_MAX_OUTPUT_SECONDS = 600;
/**
 * Largest price parameter (millicents per unit). With the largest quantity an input can ask for
 * (about 12.8 million chat input tokens: 100 messages of 32,000 four-byte characters) a maximum
 * stays far below Number.MAX_SAFE_INTEGER.
 */
export const MAX_PRICE_PARAMETER = 100_000_000;

const OPERATION_FIELDS = ['provider', 'model', 'engine', 'input', 'price', 'voice', 'timeoutSeconds', 'pollIntervalMs', 'frames', 'maxOutputSeconds', 'sizes', 'maxImagesPerRequest'];
/** Bounds of an entry's own image sizes (`sizes`): sides in pixels, and how many sizes. */
const IMAGE_SIDE = { min: 16, max: 4096 } as const;
const MAX_SIZES = 32;

/** Validates one operation's entry against the file's providers; undefined when it has a problem. */
export function parseRoute(
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
  const type = providerTypeOf(providerName, providers, rawProviders, problem, () => (failed = true));
  if (type) checkServes(type, opId, raw.engine, problem);
  const model = raw.model;
  const frames = checkFrames(raw, type, providers, rawProviders, problem);
  checkModel(raw, opId, type, frames, providers, problem);
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
 * The kind of the provider an entry names: one of the file's, or "simulated". A provider the file
 * declares with problems of its own fails the entry silently (`failed`; its problems are listed).
 */
function providerTypeOf(
  name: unknown,
  providers: Map<string, ProviderSpec>,
  rawProviders: Record<string, unknown>,
  problem: (what: string) => void,
  failed: () => void,
): ProviderType | undefined {
  if (typeof name !== 'string') problem('provider must name a provider of the file (or "simulated")');
  else if (providers.has(name)) return providers.get(name)!.type;
  else if (name === 'simulated') return 'simulated';
  else if (Object.hasOwn(rawProviders, name)) failed();
  else problem(`provider "${name}" is not declared in "providers"`);
  return undefined;
}

/**
 * `model` and `input` (a model input template) by the rules of the kind that runs the model: the
 * entry's provider, or for the sprites engine the provider that draws its frames (whose model and
 * template they are; a frame is drawn as an image.generate request).
 */
function checkModel(
  raw: Record<string, unknown>,
  opId: OperationId,
  type: ProviderType | undefined,
  frames: string | undefined,
  providers: Map<string, ProviderSpec>,
  problem: (what: string) => void,
): void {
  const model = raw.model;
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
    else checkTemplate(raw.input, findOperation(drawing ? 'image.generate' : opId)!.inputSchema as { properties?: Record<string, unknown> }, problem);
  }
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

/** Every "{{field}}" in the template names a property of the operation's input; "{{field.N}}" a list property. */
function checkTemplate(template: unknown, schema: { properties?: Record<string, unknown> }, problem: (what: string) => void, path = 'input'): void {
  if (typeof template === 'string') {
    const t = parseTemplate(template);
    const property = t && (schema.properties ?? {})[t.field];
    if (t && !Object.hasOwn(schema.properties ?? {}, t.field)) problem(`${path}: "{{${t.field}}}" is not a field of the operation's input`);
    else if (t?.index !== undefined && (property as { type?: unknown } | undefined)?.type !== 'array') problem(`${path}: "${template}" takes an element of ${t.field}, which is not a list`);
    else if (!t && template.includes('{{')) problem(`${path}: a template string is exactly "{{field}}" or "{{field.N}}" (an element of a list field)`);
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
