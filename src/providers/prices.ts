/**
 * Prices of the providers file (decisions.md section 5): parameters in millicents, summed over the
 * quantities a run consumes. The maximum cost is a true bound because every quantity is bounded
 * before the work starts and the provider is told that bound (max_tokens, image count, duration,
 * prediction deadline); the actual cost comes from what the provider reports, capped at the maximum.
 *
 * Chat input tokens are bounded by UTF-8 bytes: every token of a byte-level tokenizer encodes at
 * least one byte, and each message adds a few framing tokens (role, separators), covered by a fixed
 * allowance per message and per request.
 */
import type { OperationId } from '../operations/ids.js';
import type { Price } from '../operations/contract.js';

export const PRICE_PARAMS = [
  'perRunMillicents',
  'baseMillicents',
  'inputTokenMillicents',
  'outputTokenMillicents',
  'perImageMillicents',
  'perThousandCharactersMillicents',
  'perSecondMillicents',
  'perFrameMillicents',
  'perPredictSecondMillicents',
] as const;

export type PriceParam = (typeof PRICE_PARAMS)[number];
export type PriceParams = Partial<Record<PriceParam, number>>;

/** Framing tokens allowed per chat message, and per request (the reply's priming). */
export const CHAT_TOKENS_PER_MESSAGE = 8;
export const CHAT_TOKENS_PER_REQUEST = 8;

/** What a run consumes, each quantity in the unit of its price parameter. */
export interface Quantities {
  inputTokens?: number;
  outputTokens?: number;
  images?: number;
  characters?: number;
  seconds?: number;
  frames?: number;
  predictSeconds?: number;
}

const OPERATION_PARAMS: Partial<Record<OperationId, PriceParam[]>> = {
  'chat.generate': ['baseMillicents', 'inputTokenMillicents', 'outputTokenMillicents'],
  'image.generate': ['perImageMillicents'],
  'headshot.generate': ['perImageMillicents'],
  'speech.generate': ['perThousandCharactersMillicents'],
  'video.generate': ['perSecondMillicents'],
  'music.generate': ['perSecondMillicents'],
  'sprite.generate': ['perFrameMillicents'],
};

/** The price parameters that apply to an operation on a provider type. */
export function priceParamsFor(opId: OperationId, providerType: string): PriceParam[] {
  const params: PriceParam[] = ['perRunMillicents', ...(OPERATION_PARAMS[opId] ?? [])];
  if (providerType === 'replicate') params.push('perPredictSecondMillicents');
  // video.edit per output second only where an engine bounds the output (ffmpeg: maxOutputSeconds).
  if (opId === 'video.edit' && providerType === 'local') params.push('perSecondMillicents');
  return params;
}

const num = (v: unknown, fallback: number): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);

/** Tokens of a chat request's input can never exceed this (see the header). */
export function chatInputTokenBound(messages: unknown): number {
  const list = Array.isArray(messages) ? messages : [];
  let tokens = CHAT_TOKENS_PER_REQUEST;
  for (const m of list) {
    const content = (m as { content?: unknown } | null)?.content;
    tokens += Buffer.byteLength(typeof content === 'string' ? content : '', 'utf8') + CHAT_TOKENS_PER_MESSAGE;
  }
  return tokens;
}

/** Characters as providers count them: Unicode code points. */
export function characterCount(text: unknown): number {
  let n = 0;
  if (typeof text === 'string') for (const _ of text) n++;
  return n;
}

/**
 * The most a run of `opId` with `input` can consume, and a typical amount (the estimate).
 * `predictSeconds` is bounded by the prediction deadline of the route.
 */
export function boundQuantities(opId: OperationId, input: Record<string, unknown>, predictDeadlineSeconds: number): { maximum: Quantities; typical: Quantities } {
  const predict = { predictSeconds: predictDeadlineSeconds };
  switch (opId) {
    case 'chat.generate': {
      const inputTokens = chatInputTokenBound(input.messages);
      const maxTokens = num(input.maxTokens, 512);
      // A typical input is about four bytes per token, and a typical answer half the limit.
      return { maximum: { inputTokens, outputTokens: maxTokens }, typical: { inputTokens: Math.ceil(inputTokens / 4), outputTokens: Math.ceil(maxTokens / 2) } };
    }
    case 'image.generate':
    case 'headshot.generate': {
      const images = num(input.count, 1);
      return { maximum: { images, ...predict }, typical: { images, predictSeconds: Math.ceil(predictDeadlineSeconds / 10) } };
    }
    case 'speech.generate': {
      const characters = characterCount(input.text);
      return { maximum: { characters, ...predict }, typical: { characters, predictSeconds: Math.ceil(predictDeadlineSeconds / 10) } };
    }
    case 'video.generate':
    case 'music.generate': {
      const seconds = num(input.durationSeconds, opId === 'video.generate' ? 5 : 30);
      return { maximum: { seconds, ...predict }, typical: { seconds, predictSeconds: Math.ceil(predictDeadlineSeconds / 10) } };
    }
    case 'sprite.generate': {
      const frames = num(input.frames, 8);
      return { maximum: { frames, ...predict }, typical: { frames, predictSeconds: Math.ceil(predictDeadlineSeconds / 10) } };
    }
    default:
      return { maximum: predict, typical: { predictSeconds: Math.ceil(predictDeadlineSeconds / 10) } };
  }
}

/** The cost of `q` at `params`: every applicable parameter times its quantity, summed. */
export function costOf(params: PriceParams, q: Quantities): number {
  return (
    (params.perRunMillicents ?? 0) +
    (params.baseMillicents ?? 0) +
    (params.inputTokenMillicents ?? 0) * (q.inputTokens ?? 0) +
    (params.outputTokenMillicents ?? 0) * (q.outputTokens ?? 0) +
    (params.perImageMillicents ?? 0) * (q.images ?? 0) +
    Math.ceil(((params.perThousandCharactersMillicents ?? 0) * (q.characters ?? 0)) / 1000) +
    (params.perSecondMillicents ?? 0) * Math.ceil(q.seconds ?? 0) +
    (params.perFrameMillicents ?? 0) * (q.frames ?? 0) +
    (params.perPredictSecondMillicents ?? 0) * Math.ceil(q.predictSeconds ?? 0)
  );
}

/** Estimated and maximum cost of a run at the file's prices. */
export function priceFromParams(
  params: PriceParams,
  opId: OperationId,
  input: Record<string, unknown>,
  predictDeadlineSeconds: number,
  /** Quantities an adapter bounds itself (they replace the input's bound and the typical amount). */
  adapterBound?: Quantities,
): Price {
  const bounds = boundQuantities(opId, input, predictDeadlineSeconds);
  const maximum = { ...bounds.maximum, ...adapterBound };
  const typical = { ...bounds.typical, ...adapterBound };
  const maximumMillicents = costOf(params, maximum);
  return { estimatedMillicents: Math.min(costOf(params, typical), maximumMillicents), maximumMillicents };
}

/** What a run is charged for what it consumed: at the file's prices, never above its maximum. */
export function chargeFor(params: PriceParams, used: Quantities, maximumMillicents: number): number {
  return Math.max(0, Math.min(costOf(params, used), maximumMillicents));
}
