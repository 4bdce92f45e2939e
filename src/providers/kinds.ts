/**
 * The kinds of provider a providers file may declare (decisions.md section 5), one row each: what
 * it serves, which fields of the file apply to it, its model rule, the price parameters it adds to
 * an operation's own, and how its adapter is built. The file loader (providers-file.ts) and the
 * registry (registry.ts) iterate this table; nothing else branches on a provider's type. A new
 * kind is its adapter's file plus one row here.
 */
import type { OperationId } from '../operations/ids.js';
import type { PriceParam } from '../operations/pricing.js';
import { findOperation } from '../operations/registry.js';
import { LOCAL_ENGINES, localProvider } from './local/index.js';
import { openAiProvider } from './openai.js';
import { replicateProvider } from './replicate.js';
import type { AdapterContext, LocalContext, Provider } from './types.js';
import type { ProviderSpec, ProviderType } from './specs.js';

export type { ProviderType } from './specs.js';

/** Fields of an operation's entry that apply on some kinds only. */
export type RouteField = 'model' | 'input' | 'voice' | 'sizes' | 'engine';

export interface ProviderKind {
  /**
   * Behind an HTTP API: baseUrl, apiKeyEnv, privateNetwork, requestTimeoutMs and maxRetries apply,
   * and the file's providers of this kind get one adapter each.
   */
  remote: boolean;
  /** Provider fields of the file beyond the remote ones (mediaInputs: replicate). */
  providerFields: readonly string[];
  /** Why it cannot serve `opId` (with `engine`, for local), or undefined when it can. */
  refusal(opId: OperationId, engine: unknown): string | undefined;
  /** A model is required, and a model name it refuses (or undefined when any name will do). */
  model?: { pattern?: RegExp; patternProblem?: string };
  /** Which route fields apply on this kind, for which operations. */
  routeFields: Partial<Record<RouteField, (opId: OperationId) => boolean>>;
  /** The file must give a price for its entries (real work costs real money). */
  priceRequired: boolean;
  /** Price parameters this kind adds to an operation's own (and perRunMillicents). */
  priceParams(opId: OperationId): readonly PriceParam[];
  /** It can draw a sprite's frames (the sprites engine's `frames`). */
  drawsImages: boolean;
  /** A workspace's own provider key can pay for its work (a local engine needs no account). */
  personalKeys: boolean;
  /** The adapter of one provider of the file (remote kinds). */
  adapter?(spec: ProviderSpec, ctx: AdapterContext): Provider;
  /** The adapter of one route (local: one engine per route). */
  routeAdapter?(ctx: LocalContext): Provider;
}

/** Operations a replicate model cannot serve: synchronous ones, and those that need a local engine. */
const NOT_ON_REPLICATE: readonly OperationId[] = ['link.preview', 'chat.generate', 'security.scan', 'sprite.generate', 'video.edit'];
const OPENAI_OPERATIONS: readonly OperationId[] = ['chat.generate', 'image.generate', 'speech.generate'];
const everywhere = () => true;

export const PROVIDER_KINDS: Readonly<Record<ProviderType, ProviderKind>> = {
  openai: {
    remote: true,
    providerFields: [],
    refusal: (opId) => (OPENAI_OPERATIONS.includes(opId) ? undefined : `an openai provider cannot serve ${opId} (it serves ${OPENAI_OPERATIONS.join(', ')})`),
    model: {},
    routeFields: { model: everywhere, voice: (opId) => opId === 'speech.generate', sizes: (opId) => opId === 'image.generate' },
    priceRequired: true,
    priceParams: () => [],
    drawsImages: true,
    personalKeys: true,
    adapter: openAiProvider,
  },
  replicate: {
    remote: true,
    providerFields: ['mediaInputs'],
    refusal: (opId) => (NOT_ON_REPLICATE.includes(opId) ? `a replicate provider cannot serve ${opId}` : undefined),
    model: { pattern: /^[a-z0-9][a-z0-9_.-]{0,99}\/[a-z0-9][a-z0-9_.-]{0,99}(:[0-9a-f]{64})?$/i, patternProblem: 'a replicate model is "owner/name" or "owner/name:VERSION" (64 hex digits)' },
    routeFields: { model: everywhere, input: everywhere },
    priceRequired: true,
    // A prediction is bounded by its deadline, so its seconds can be priced.
    priceParams: () => ['perPredictSecondMillicents'],
    drawsImages: true,
    personalKeys: true,
    adapter: replicateProvider,
  },
  local: {
    remote: false,
    providerFields: [],
    refusal(opId, engine) {
      if (typeof engine !== 'string') return 'a local provider needs "engine"';
      const known = Object.keys(LOCAL_ENGINES);
      const row = Object.hasOwn(LOCAL_ENGINES, engine) ? LOCAL_ENGINES[engine] : undefined;
      if (!row) return `unknown engine "${engine}" (engines in this version: ${known.length ? known.join(', ') : 'none'})`;
      return row.serves === opId ? undefined : `engine "${engine}" cannot serve ${opId}`;
    },
    routeFields: { engine: everywhere },
    priceRequired: true,
    // What the engine serving the operation bounds itself (each engine serves one operation).
    priceParams: (opId) => Object.values(LOCAL_ENGINES).find((engine) => engine.serves === opId)?.priceParams ?? [],
    drawsImages: false,
    personalKeys: false,
    routeAdapter: localProvider,
  },
  simulated: {
    remote: false,
    providerFields: [],
    refusal: () => undefined,
    routeFields: {},
    priceRequired: false,
    priceParams: () => [],
    drawsImages: true,
    personalKeys: true,
  },
};

export const PROVIDER_TYPES = Object.keys(PROVIDER_KINDS) as ProviderType[];

export function isProviderType(value: unknown): value is ProviderType {
  return typeof value === 'string' && Object.hasOwn(PROVIDER_KINDS, value);
}

/** The kinds a route field applies on (for the loader's messages). */
export function kindsWithField(field: RouteField): ProviderType[] {
  return PROVIDER_TYPES.filter((type) => PROVIDER_KINDS[type].routeFields[field] !== undefined);
}

/** The price parameters that apply to an operation on a provider kind. */
export function priceParamsFor(opId: OperationId, providerType: ProviderType): PriceParam[] {
  return ['perRunMillicents', ...findOperation(opId)!.priceParams, ...PROVIDER_KINDS[providerType].priceParams(opId)];
}
