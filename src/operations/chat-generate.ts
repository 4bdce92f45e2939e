/** chat.generate: a chat completion. Synchronous; cost grows with input and output tokens. */
import type { TSchema } from 'typebox';
import { resultObject, inputObject, integer, list, str, type OperationContract } from './contract.js';
import { priceFromParams, type PriceParams } from '../providers/prices.js';

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
 * prices (src/providers/prices.ts, decisions.md section 5): the maximum bounds input tokens by the
 * UTF-8 bytes of the messages plus a fixed allowance per message, never by a characters-per-token
 * guess, so it is a true bound for any tokenizer.
 */
const BUILT_IN_PRICE: PriceParams = { baseMillicents: 20, inputTokenMillicents: 1, outputTokenMillicents: 3 };

export const chatGenerate: OperationContract = {
  id: 'chat.generate',
  toolSlug: 'chat',
  summaryKey: 'tools.chat.generate.summary',
  asynchronous: false,
  inputSchema: inputObject(
    {
      messages: { type: 'array', items: message, minItems: 1, maxItems: 100 } as unknown as TSchema,
      maxTokens: integer(1, 4096, 512),
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
  price: (input) => priceFromParams(BUILT_IN_PRICE, 'chat.generate', input, 0),
  steps: () => 1,
  mainText(input) {
    const messages = list(input.messages);
    return str((messages[messages.length - 1] as { content?: unknown } | undefined)?.content);
  },
};
