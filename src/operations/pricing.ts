/**
 * The pricing maths (decisions.md section 5), shared by the operation contracts and the provider
 * adapters: price parameters in millicents, summed over the quantities a run consumes. The
 * maximum cost is a true bound because every quantity is bounded before the work starts and the
 * provider is told that bound (max_tokens, image count, duration, prediction deadline); the actual
 * cost comes from what the provider reports, capped at the maximum.
 *
 * Which quantities an operation consumes, and how they follow from its input, is the operation's
 * own (`quantities` of its contract); which parameters apply on a kind of provider is the
 * provider kind's (providers/). This module knows neither: it is the arithmetic between them.
 *
 * Chat input tokens are bounded by UTF-8 bytes: every token of a byte-level tokenizer encodes at
 * least one byte, and each message adds a few framing tokens (role, separators), covered by a fixed
 * allowance per message and per request.
 */

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

export interface Price {
  estimatedMillicents: number;
  maximumMillicents: number;
}

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

/** The most a run of an input can consume, and a typical amount (what the estimate prices). */
export interface QuantityBounds {
  maximum: Quantities;
  typical: Quantities;
}

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

/**
 * Estimated and maximum cost of a run at `params`. The prediction time is bounded by the route's
 * deadline (a tenth of it is typical) unless the operation's bounds say otherwise;
 * `adapterBound` holds the quantities an adapter bounds itself (they replace the operation's bound
 * and the typical amount).
 */
export function priceOf(params: PriceParams, bounds: QuantityBounds, predictDeadlineSeconds: number, adapterBound?: Quantities): Price {
  const maximum = { predictSeconds: predictDeadlineSeconds, ...bounds.maximum, ...adapterBound };
  const typical = { predictSeconds: Math.ceil(predictDeadlineSeconds / 10), ...bounds.typical, ...adapterBound };
  const maximumMillicents = costOf(params, maximum);
  return { estimatedMillicents: Math.min(costOf(params, typical), maximumMillicents), maximumMillicents };
}

/** What a run costs for what it consumed: at `params`, never above its maximum. */
export function costOfUsage(params: PriceParams, used: Quantities, maximumMillicents: number): number {
  return Math.max(0, Math.min(costOf(params, used), maximumMillicents));
}

/** Two parts of one run priced apart (at two routes' prices): their sum, estimate and maximum. */
export function addPrices(a: Price, b: Price | undefined): Price {
  if (!b) return a;
  return { estimatedMillicents: a.estimatedMillicents + b.estimatedMillicents, maximumMillicents: a.maximumMillicents + b.maximumMillicents };
}
