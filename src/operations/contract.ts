/**
 * What every Tool operation declares (decisions.md section 2): its input JSON Schema (served by
 * GET /v1/tools and used to validate estimates and runs), usage points, synchronous or queued,
 * a price function giving the estimated and the bounded maximum cost in millicents, and, for
 * operations that run in steps, how many checkpointed steps an input needs.
 */
import type { TSchema } from 'typebox';
import type { OperationId } from './ids.js';

/** Kinds of workspace media an input may reference or an output may produce. */
export type MediaKind = 'image' | 'audio' | 'video' | 'model';

export interface MediaField {
  /** Input property naming media: a single UUID (`mediaId`) or an array (`referenceMediaIds`). */
  field: string;
  multiple: boolean;
  kinds: MediaKind[];
}

export interface Price {
  estimatedMillicents: number;
  maximumMillicents: number;
}

export interface OperationContract {
  id: OperationId;
  toolSlug: string;
  summaryKey: string;
  asynchronous: boolean;
  inputSchema: TSchema;
  mediaFields: MediaField[];
  /** The kind of file the operation produces, if any. */
  produces: MediaKind | null;
  /** Estimated and bounded maximum cost for a (valid) input, before any override of the price book. */
  price(input: Record<string, unknown>): Price;
  /** Checkpointed steps the work is split into (1 for single-step operations). */
  steps(input: Record<string, unknown>): number;
  /** The main text input, where simulated-provider directives are read. */
  mainText(input: Record<string, unknown>): string | undefined;
}

/** A JSON Schema for an operation input: an object that forbids other properties. */
export function inputObject(properties: Record<string, TSchema>, required: string[]): TSchema {
  return { type: 'object', properties, required, additionalProperties: false } as unknown as TSchema;
}

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
