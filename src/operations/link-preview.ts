/** link.preview: fetches a web page through the egress guard and reads its metadata. Synchronous. */
import { resultObject, inputObject, type OperationContract } from './contract.js';
import type { TSchema } from 'typebox';

export const linkPreview: OperationContract = {
  id: 'link.preview',
  toolSlug: 'link',
  summaryKey: 'tools.link.preview.summary',
  asynchronous: false,
  inputSchema: inputObject(
    { url: { type: 'string', format: 'uri', pattern: '^[Hh][Tt][Tt][Pp][Ss]?://', maxLength: 2048, description: 'http or https address of a web page' } as unknown as TSchema },
    ['url'],
  ),
  resultSchema: resultObject(
    {
      metadata: {
        type: 'object',
        properties: Object.fromEntries(['title', 'description', 'image', 'url', 'siteName', 'favicon'].map((k) => [k, { type: ['string', 'null'] }])),
        required: ['title', 'description', 'image', 'url', 'siteName', 'favicon'],
        additionalProperties: false,
      },
    },
    ['metadata'],
  ),
  mediaFields: [],
  produces: null,
  price: () => ({ estimatedMillicents: 50, maximumMillicents: 50 }),
  steps: () => 1,
  mainText: () => undefined,
};
