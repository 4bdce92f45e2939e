/** link.preview: fetches a web page through the egress guard and reads its metadata. Synchronous. */
import { resultObject, inputObject, noQuantities, type OperationContract } from './contract.js';
import type { TSchema } from 'typebox';

export const linkPreview: OperationContract = {
  id: 'link.preview',
  toolSlug: 'link',
  summaryKey: 'tools.link.preview.summary',
  title: 'Preview a web page (title, description, image)',
  points: 4,
  typicalInput: { summary: 'one web page', input: { url: 'https://example.com/' } },
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
  quantities: noQuantities,
  priceParams: [],
  steps: () => 1,
  mainText: () => undefined,
};
