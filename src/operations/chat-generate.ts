/** chat.generate: a chat completion. Synchronous; cost grows with input and output tokens. */
import type { TSchema } from 'typebox';
import { resultObject, inputObject, integer, list, num, str, type OperationContract } from './contract.js';

const message = {
  type: 'object',
  properties: {
    role: { type: 'string', enum: ['system', 'user', 'assistant'] },
    content: { type: 'string', minLength: 1, maxLength: 32_000 },
  },
  required: ['role', 'content'],
  additionalProperties: false,
} as unknown as TSchema;

/** Rough token count of a text: one token per four characters, at least one. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

const INPUT_TOKEN_MC = 1;
const OUTPUT_TOKEN_MC = 3;
const BASE_MC = 20;

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
  price(input) {
    const inTokens = list(input.messages).reduce<number>((sum, m) => sum + tokens(str((m as { content?: unknown }).content) ?? ''), 0);
    const maxOut = num(input.maxTokens, 512);
    return {
      estimatedMillicents: BASE_MC + inTokens * INPUT_TOKEN_MC + Math.ceil(maxOut / 2) * OUTPUT_TOKEN_MC,
      maximumMillicents: BASE_MC + inTokens * INPUT_TOKEN_MC + maxOut * OUTPUT_TOKEN_MC,
    };
  },
  steps: () => 1,
  mainText(input) {
    const messages = list(input.messages);
    return str((messages[messages.length - 1] as { content?: unknown } | undefined)?.content);
  },
};
