/** background.remove: cuts the background out of one image. */
import { fileResult, resultObject, inputObject, uuidSchema, noQuantities, EXAMPLE_MEDIA_ID, type OperationContract } from './contract.js';

export const backgroundRemove: OperationContract = {
  id: 'background.remove',
  toolSlug: 'image',
  summaryKey: 'tools.background.remove.summary',
  title: 'Remove the background of an image',
  points: 15,
  typicalInput: { summary: 'one image', input: { mediaId: EXAMPLE_MEDIA_ID } },
  asynchronous: true,
  inputSchema: inputObject({ mediaId: uuidSchema }, ['mediaId']),
  resultSchema: resultObject({ image: fileResult }, ['image']),
  mediaFields: [{ field: 'mediaId', multiple: false, kinds: ['image'] }],
  produces: 'image',
  price: () => ({ estimatedMillicents: 2000, maximumMillicents: 2000 }),
  quantities: noQuantities,
  priceParams: [],
  steps: () => 1,
  mainText: () => undefined,
};
