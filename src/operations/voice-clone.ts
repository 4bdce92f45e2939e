/**
 * voice.clone: a reusable workspace voice from 1 to 5 audio samples, with an optional spoken
 * sample. The job's finish stores the voice (modules/voices/clone-finish.ts): the first sample is
 * its reference audio, and the result's voice.id is the workspace voice's id.
 */
import { fileResult, resultObject, inputObject, str, text, uuidList, noQuantities, EXAMPLE_MEDIA_IDS, type OperationContract } from './contract.js';

export const voiceClone: OperationContract = {
  id: 'voice.clone',
  toolSlug: 'voice',
  summaryKey: 'tools.voice.clone.summary',
  title: 'Clone a voice',
  points: 75,
  typicalInput: { summary: 'one voice from 2 recordings', input: { referenceMediaIds: EXAMPLE_MEDIA_IDS.slice(0, 2), name: 'Narrator' } },
  asynchronous: true,
  inputSchema: inputObject({ referenceMediaIds: uuidList(1, 5), name: text(1, 100), sampleText: text(1, 1000) }, ['referenceMediaIds', 'name']),
  resultSchema: resultObject(
    {
      voice: {
        type: 'object',
        properties: {
          id: { type: 'string', format: 'uuid', description: 'The workspace voice made (GET /v1/voices/{id}): speech.generate speaks with it as voiceId.' },
          name: { type: 'string' },
        },
        required: ['id', 'name'],
        additionalProperties: false,
      },
      sample: fileResult,
    },
    ['voice'],
  ),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['audio'] }],
  produces: 'audio',
  price: () => ({ estimatedMillicents: 25_000, maximumMillicents: 25_000 }),
  quantities: noQuantities,
  priceParams: [],
  steps: () => 1,
  mainText: (input) => str(input.sampleText),
};
