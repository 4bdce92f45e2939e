/** chat.generate: a chat completion. Synchronous; cost grows with input and output tokens. */
import type { TSchema } from 'typebox';
import { resultObject, inputObject, integer, list, num, str, type OperationContract } from './contract.js';
import { chatInputTokenBound, priceOf, type PriceParams, type QuantityBounds } from './pricing.js';

const message = {
  type: 'object',
  properties: {
    role: { type: 'string', enum: ['system', 'user', 'assistant'] },
    content: { type: 'string', minLength: 1, maxLength: 32_000 },
  },
  required: ['role', 'content'],
  additionalProperties: false,
} as unknown as TSchema;

/**
 * The built-in price book's chat prices. They are priced by the same rule as a providers file's
 * prices (src/operations/pricing.ts, decisions.md section 5): the maximum bounds input tokens by the
 * UTF-8 bytes of the messages plus a fixed allowance per message, never by a characters-per-token
 * guess, so it is a true bound for any tokenizer.
 */
const BUILT_IN_PRICE: PriceParams = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };

const DEFAULT_MAX_TOKENS = 512;

/**
 * Input tokens bounded by the messages' bytes, output tokens by maxTokens; typically about four
 * bytes per token and an answer of half the limit. A chat is priced by tokens alone: its
 * prediction time is no quantity of it.
 */
function chatQuantities(input: Record<string, unknown>): QuantityBounds {
  const inputTokens = chatInputTokenBound(input.messages);
  const maxTokens = num(input.maxTokens, DEFAULT_MAX_TOKENS);
  return {
    maximum: { inputTokens, outputTokens: maxTokens, predictSeconds: 0 },
    typical: { inputTokens: Math.ceil(inputTokens / 4), outputTokens: Math.ceil(maxTokens / 2), predictSeconds: 0 },
  };
}

export const chatGenerate: OperationContract = {
  id: 'chat.generate',
  toolSlug: 'chat',
  summaryKey: 'tools.chat.generate.summary',
  title: 'Generate a chat answer',
  points: 10,
  typicalInput: {
    summary: 'a 500-character question, up to 512 tokens of answer',
    input: { messages: [{ role: 'user', content: 'x'.repeat(500) }], maxTokens: DEFAULT_MAX_TOKENS },
  },
  asynchronous: false,
  inputSchema: inputObject(
    {
      messages: { type: 'array', items: message, minItems: 1, maxItems: 100 } as unknown as TSchema,
      maxTokens: integer(1, 4096, DEFAULT_MAX_TOKENS),
      temperature: { type: 'number', minimum: 0, maximum: 2 } as unknown as TSchema,
    },
    ['messages'],
  ),
  resultSchema: resultObject(
    {
      message: {
        type: 'object',
        properties: { role: { const: 'assistant' }, content: { type: 'string' } },
        required: ['role', 'content'],
        additionalProperties: false,
      },
      finishReason: { type: ['string', 'null'] },
      usage: {
        type: 'object',
        properties: { inputTokens: { type: 'integer', minimum: 0 }, outputTokens: { type: 'integer', minimum: 0 } },
        required: ['inputTokens', 'outputTokens'],
        additionalProperties: false,
      },
    },
    ['message'],
  ),
  mediaFields: [],
  produces: null,
  price: (input) => priceOf(BUILT_IN_PRICE, chatQuantities(input), 0),
  quantities: chatQuantities,
  priceParams: ['baseMillicents', 'inputTokenMillicents', 'outputTokenMillicents'],
  steps: () => 1,
  mainText(input) {
    const messages = list(input.messages);
    return str((messages[messages.length - 1] as { content?: unknown } | undefined)?.content);
  },
};
