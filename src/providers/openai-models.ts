/**
 * What OpenAI's models accept, by model family, so the `openai` adapter sends only requests the
 * model can honour (issue 39, item 1). Sources, the public OpenAI API reference:
 * - "Create image" (https://platform.openai.com/docs/api-reference/images/create): `size` must be
 *   256x256, 512x512 or 1024x1024 for dall-e-2; 1024x1024, 1792x1024 or 1024x1792 for dall-e-3;
 *   1024x1024, 1536x1024, 1024x1536 or auto for the GPT image models. `n` is 1 to 10, and only 1
 *   for dall-e-3. `response_format` (url or b64_json) applies to dall-e-2 and dall-e-3 only; GPT
 *   image models always answer base64 and report token `usage`.
 * - "Create image edit" (https://platform.openai.com/docs/api-reference/images/createEdit):
 *   dall-e-2 and the GPT image models only; dall-e-2 takes one square PNG image.
 * - "Create chat completion" (https://platform.openai.com/docs/api-reference/chat/create):
 *   `max_tokens` is deprecated in favour of `max_completion_tokens` and not compatible with the
 *   o-series reasoning models; reasoning models (o1, o3, o4, gpt-5) take only the default
 *   temperature.
 *
 * A model outside these families (an OpenAI-compatible server: Ollama, vLLM, LocalAI …) is sent
 * the size it is asked for, unless the providers file lists the sizes it accepts (`sizes`,
 * `maxImagesPerRequest` on the operation entry).
 */
import type { TSchema } from 'typebox';
import type { OperationContract } from '../operations/contract.js';

/** An entry's own image rules (the providers file's `sizes`, `maxImagesPerRequest`). */
export interface ImageEntryRules {
  model?: string;
  sizes?: readonly ImageSize[];
  maxImagesPerRequest?: number;
}

export interface ImageSize {
  width: number;
  height: number;
}

export interface ImageModelRules {
  /** The family the rules come from (`dall-e-2` …), or `file` for an entry's own `sizes`. */
  family: string;
  /** Sizes the model generates; undefined: any size the input allows is sent as asked. */
  sizes?: readonly ImageSize[];
  /** Most images one request may ask for (`n`). */
  maxPerRequest: number;
  /** The model takes `response_format` (dall-e); GPT image models refuse it. */
  responseFormat: boolean;
  /** Most reference images an edit takes; 0: the model has no edit endpoint. */
  maxReferences: number;
  /** An edit's image must be a square PNG (dall-e-2): references are made one (padded, transparent). */
  squareReference?: boolean;
}

const size = (width: number, height: number): ImageSize => ({ width, height });

/** The model families of the OpenAI API reference ("Create image", "Create image edit"). */
export const OPENAI_IMAGE_FAMILIES: readonly { pattern: RegExp; rules: ImageModelRules }[] = [
  { pattern: /^dall-e-2$/i, rules: { family: 'dall-e-2', sizes: [size(256, 256), size(512, 512), size(1024, 1024)], maxPerRequest: 10, responseFormat: true, maxReferences: 1, squareReference: true } },
  { pattern: /^dall-e-3$/i, rules: { family: 'dall-e-3', sizes: [size(1024, 1024), size(1792, 1024), size(1024, 1792)], maxPerRequest: 1, responseFormat: true, maxReferences: 0 } },
  { pattern: /^(chatgpt-image|gpt-image)/i, rules: { family: 'gpt-image', sizes: [size(1024, 1024), size(1536, 1024), size(1024, 1536)], maxPerRequest: 10, responseFormat: false, maxReferences: 16 } },
];

/** Images per request of a model the table does not know (the API's own bound). */
export const DEFAULT_MAX_IMAGES_PER_REQUEST = 10;

/** A `WxH` size string of the providers file. */
export function parseSize(text: string): ImageSize | undefined {
  const m = /^([1-9][0-9]{1,4})x([1-9][0-9]{1,4})$/.exec(text);
  return m ? size(Number(m[1]), Number(m[2])) : undefined;
}

export const sizeText = (s: ImageSize): string => `${s.width}x${s.height}`;

/**
 * The rules for `model`: the entry's own `sizes` / `maxImagesPerRequest` win over the table; a
 * model the table does not know takes any size and up to 10 images per request.
 */
export function imageRulesFor(model: string, entry: { sizes?: readonly ImageSize[]; maxImagesPerRequest?: number } = {}): ImageModelRules {
  const known = OPENAI_IMAGE_FAMILIES.find((f) => f.pattern.test(model))?.rules;
  const base: ImageModelRules = known ?? { family: 'other', maxPerRequest: DEFAULT_MAX_IMAGES_PER_REQUEST, responseFormat: true, maxReferences: 16 };
  return {
    ...base,
    ...(entry.sizes ? { family: 'file', sizes: entry.sizes } : {}),
    ...(entry.maxImagesPerRequest !== undefined ? { maxPerRequest: entry.maxImagesPerRequest } : {}),
  };
}

/**
 * The accepted size nearest to `wanted`: the same shape first (smallest difference of the
 * logarithm of the aspect ratios), then the smallest size covering it (so the resize only scales
 * down), else the largest of that shape.
 */
export function nearestSize(sizes: readonly ImageSize[], wanted: ImageSize): ImageSize {
  const shape = (s: ImageSize) => Math.abs(Math.log(s.width / s.height) - Math.log(wanted.width / wanted.height));
  const best = Math.min(...sizes.map(shape));
  const sameShape = sizes.filter((s) => shape(s) - best < 1e-9).sort((a, b) => a.width * a.height - b.width * b.height);
  return sameShape.find((s) => s.width >= wanted.width && s.height >= wanted.height) ?? sameShape[sameShape.length - 1]!;
}

export interface ImagePlan {
  /** The size the user asked for, delivered exactly. */
  requested: ImageSize;
  /** The size sent to the provider. */
  generated: ImageSize;
  /** `n` of each request, summing to the count asked for. */
  batches: number[];
}

/** The requests that make `count` images of `requested` on a model with `rules`. */
export function planImages(rules: ImageModelRules, requested: ImageSize, count: number): ImagePlan {
  const generated = rules.sizes ? nearestSize(rules.sizes, requested) : requested;
  const batches: number[] = [];
  for (let left = count; left > 0; left -= rules.maxPerRequest) batches.push(Math.min(left, rules.maxPerRequest));
  return { requested, generated, batches };
}

/**
 * Chat models that reason (o-series, gpt-5): they refuse `max_tokens` (the limit is
 * `max_completion_tokens`, which also counts reasoning tokens) and any temperature but the default.
 */
export function isReasoningChatModel(model: string): boolean {
  return /^(o[1-9])([-.].*)?$/i.test(model) || /^gpt-5/i.test(model);
}

/**
 * The input a route can honour, checked at admission (400 INVALID_INPUT before anything is
 * reserved) instead of failing after: a reasoning chat model takes no temperature; an image model
 * without an edit endpoint (dall-e-3) takes no reference images, and dall-e-2 takes one.
 */
export function openAiInputSchema(op: OperationContract, entry?: ImageEntryRules): TSchema {
  const model = entry?.model;
  if (!model) return op.inputSchema;
  const base = op.inputSchema as unknown as { properties: Record<string, Record<string, unknown>>; required: string[] };
  if (op.id === 'chat.generate' && isReasoningChatModel(model)) {
    const { temperature: _ignored, ...properties } = base.properties;
    return { ...base, properties } as unknown as TSchema;
  }
  if (op.id === 'image.generate') {
    const { maxReferences } = imageRulesFor(model, entry);
    const current = base.properties.referenceMediaIds;
    if (!current || typeof current.maxItems !== 'number' || maxReferences >= current.maxItems) return op.inputSchema;
    if (maxReferences === 0) {
      const { referenceMediaIds: _ignored, ...properties } = base.properties;
      return { ...base, properties, description: `${model} has no image edit endpoint: referenceMediaIds is not accepted.` } as unknown as TSchema;
    }
    return { ...base, properties: { ...base.properties, referenceMediaIds: { ...current, maxItems: maxReferences } } } as unknown as TSchema;
  }
  return op.inputSchema;
}
