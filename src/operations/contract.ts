/**
 * What every Tool operation declares (decisions.md section 2), in its own file: its input JSON
 * Schema (served by GET /v1/tools and used to validate estimates and runs) with its defaults, its
 * result schema, usage points, synchronous or queued, its title and a typical input, the
 * quantities an input makes it consume (which bound the cost at any provider's prices), the
 * built-in price giving the estimated and the bounded maximum cost in millicents, and how many
 * checkpointed steps an input needs. Every other table of operations is derived from these
 * contracts (registry.ts); adding an operation: docs/adding-an-operation.md.
 */
import type { TSchema } from 'typebox';
import type { OperationId } from './ids.js';
import type { Price, PriceParam, QuantityBounds } from './pricing.js';

export type { Price } from './pricing.js';

/** Kinds of workspace media an input may reference or an output may produce. */
export type MediaKind = 'image' | 'audio' | 'video' | 'model';

export interface MediaField {
  /** Input property naming media: a single UUID (`mediaId`) or an array (`referenceMediaIds`). */
  field: string;
  multiple: boolean;
  kinds: MediaKind[];
  /**
   * The media id is not the field itself but the property of this name in each element of the
   * field (an array of objects; elements without it are skipped): `edits[].mediaId`.
   */
  within?: string;
}

/** An input that stands for the usual case: priced in tool descriptions before a caller has one. */
export interface TypicalInput {
  /** What the input is, in words, for the description. */
  summary: string;
  input: Record<string, unknown>;
}

export interface OperationContract {
  id: OperationId;
  toolSlug: string;
  summaryKey: string;
  /** What the operation does, as a tool title (MCP). */
  title: string;
  /** Usage points of one estimate or run (spec: usage points per operation). */
  points: number;
  /**
   * A typical input (defaults written out; a media id is one fixed example UUID, since prices
   * count media inputs and never read them).
   */
  typicalInput: TypicalInput;
  asynchronous: boolean;
  inputSchema: TSchema;
  /**
   * The public result (`result` of a synchronous run, the complete output of a job): one shape
   * whatever the provider, with `provider` and `model` beside the operation's own fields.
   */
  resultSchema: TSchema;
  mediaFields: MediaField[];
  /**
   * An input field holding a URL whose hostname must be a domain verified in the workspace
   * (security.scan: nobody scans a site they have not proven they control); runs of another
   * hostname are refused at admission with 400 DOMAIN_NOT_VERIFIED.
   */
  verifiedHostField?: string;
  /**
   * An input field naming a workspace voice by id (speech.generate `voiceId`, issue 37): checked
   * at admission (the voice must be this workspace's and mode's, and the route must take voices)
   * and handed to the adapter as ProviderRun.voice.
   */
  voiceField?: string;
  /** The kind of file the operation produces, if any. */
  produces: MediaKind | null;
  /** Estimated and bounded maximum cost for a (valid) input at the built-in price book. */
  price(input: Record<string, unknown>): Price;
  /**
   * What a run of `input` consumes at most and typically, in the units of the price parameters
   * (pricing.ts): a providers file's prices for this operation are priced over these.
   */
  quantities(input: Record<string, unknown>): QuantityBounds;
  /** The price parameters of a providers file that apply to this operation (besides perRunMillicents and a provider kind's own). */
  priceParams: readonly PriceParam[];
  /** Checkpointed steps the work is split into (1 for single-step operations). */
  steps(input: Record<string, unknown>): number;
  /**
   * Rules of the input a JSON Schema cannot say (a trim that ends before it starts); each broken
   * rule is a 400 INVALID_INPUT with its JSON pointer under /input, before anything is reserved.
   */
  check?(input: Record<string, unknown>): { pointer: string; message: string }[];
  /** The main text input, where simulated-provider directives are read. */
  mainText(input: Record<string, unknown>): string | undefined;
}

/** A JSON Schema for an operation input: an object that forbids other properties. */
export function inputObject(properties: Record<string, TSchema>, required: string[]): TSchema {
  return { type: 'object', properties, required, additionalProperties: false } as unknown as TSchema;
}

/** No quantity of the operation's own: only a run and, on a remote provider, its prediction time. */
export const noQuantities = (): QuantityBounds => ({ maximum: {}, typical: {} });

/** Example media ids for typical inputs (distinct: a list of media ids holds each once). */
export const EXAMPLE_MEDIA_IDS = ['00000000-0000-4000-8000-000000000001', '00000000-0000-4000-8000-000000000002', '00000000-0000-4000-8000-000000000003'] as const;
export const EXAMPLE_MEDIA_ID = EXAMPLE_MEDIA_IDS[0];

export const uuidSchema = { type: 'string', format: 'uuid' } as unknown as TSchema;

export function uuidList(min: number, max: number): TSchema {
  return { type: 'array', items: uuidSchema, minItems: min, maxItems: max, uniqueItems: true } as unknown as TSchema;
}

export function text(min: number, max: number, description?: string): TSchema {
  return { type: 'string', minLength: min, maxLength: max, ...(description ? { description } : {}) } as unknown as TSchema;
}

export function integer(min: number, max: number, def?: number): TSchema {
  return { type: 'integer', minimum: min, maximum: max, ...(def !== undefined ? { default: def } : {}) } as unknown as TSchema;
}

export function oneOf(values: string[], def?: string): TSchema {
  return { type: 'string', enum: values, ...(def !== undefined ? { default: def } : {}) } as unknown as TSchema;
}

export const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
export const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
export const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** A file in a result: a media item of the workspace with a fresh signed URL. */
export const fileResult = {
  type: 'object',
  properties: {
    mediaId: { type: 'string', format: 'uuid' },
    name: { type: 'string' },
    mimeType: { type: 'string' },
    sizeBytes: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    url: { type: 'string' },
    urlExpiresAt: { type: 'string' },
  },
  required: ['mediaId', 'mimeType', 'sizeBytes', 'url'],
  additionalProperties: false,
} as unknown as TSchema;

export const fileList = (min = 1): TSchema => ({ type: 'array', items: fileResult, minItems: min }) as unknown as TSchema;

/**
 * A result object: the operation's fields, plus those every result may carry: `provider` (its name
 * in the providers file; simulated, link-preview), `model`, `predictionId` (a remote prediction)
 * and `text` (the simulated provider's filler of `[sim:outputBytes=N]`).
 */
export function resultObject(properties: Record<string, unknown>, required: string[]): TSchema {
  return {
    type: 'object',
    properties: {
      ...properties,
      provider: { type: 'string' },
      model: { type: ['string', 'null'] },
      predictionId: { type: 'string' },
      text: { type: 'string' },
    },
    required,
    additionalProperties: false,
  } as unknown as TSchema;
}
