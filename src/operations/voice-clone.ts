/** voice.clone: a reusable voice from 1 to 5 audio samples, with an optional spoken sample. */
import { fileResult, resultObject, inputObject, str, text, uuidList, type OperationContract } from './contract.js';

export const voiceClone: OperationContract = {
  id: 'voice.clone',
  toolSlug: 'voice',
  summaryKey: 'tools.voice.clone.summary',
  asynchronous: true,
  inputSchema: inputObject({ referenceMediaIds: uuidList(1, 5), name: text(1, 100), sampleText: text(1, 1000) }, ['referenceMediaIds', 'name']),
  resultSchema: resultObject(
    {
      voice: { type: 'object', properties: { id: { type: 'string' }, name: { type: 'string' } }, required: ['id', 'name'], additionalProperties: false },
      sample: fileResult,
    },
    ['voice'],
  ),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['audio'] }],
  produces: 'audio',
  price: () => ({ estimatedMillicents: 25_000, maximumMillicents: 25_000 }),
  steps: () => 1,
  mainText: (input) => str(input.sampleText),
};
