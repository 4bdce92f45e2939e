/** background.remove: cuts the background out of one image. */
import { fileResult, resultObject, inputObject, uuidSchema, type OperationContract } from './contract.js';

export const backgroundRemove: OperationContract = {
  id: 'background.remove',
  toolSlug: 'image',
  summaryKey: 'tools.background.remove.summary',
  asynchronous: true,
  inputSchema: inputObject({ mediaId: uuidSchema }, ['mediaId']),
  resultSchema: resultObject({ image: fileResult }, ['image']),
  mediaFields: [{ field: 'mediaId', multiple: false, kinds: ['image'] }],
  produces: 'image',
  price: () => ({ estimatedMillicents: 2000, maximumMillicents: 2000 }),
  steps: () => 1,
  mainText: () => undefined,
};
