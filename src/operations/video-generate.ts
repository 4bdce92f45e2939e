/** video.generate: a video from a prompt, rendered in one-second segments (checkpointed steps). */
import { fileResult, resultObject, inputObject, integer, num, oneOf, str, text, uuidList, type OperationContract } from './contract.js';

const PER_SECOND_MC = 10_000;

export const videoGenerate: OperationContract = {
  id: 'video.generate',
  toolSlug: 'video',
  summaryKey: 'tools.video.generate.summary',
  asynchronous: true,
  inputSchema: inputObject(
    {
      prompt: text(1, 4000),
      durationSeconds: integer(1, 20, 5),
      aspectRatio: oneOf(['16:9', '9:16', '1:1'], '16:9'),
      referenceMediaIds: uuidList(0, 4),
    },
    ['prompt'],
  ),
  resultSchema: resultObject({ video: fileResult, durationSeconds: { type: 'number', minimum: 0 } }, ['video']),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }],
  produces: 'video',
  price(input) {
    const cost = PER_SECOND_MC * num(input.durationSeconds, 5);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  steps: (input) => num(input.durationSeconds, 5),
  mainText: (input) => str(input.prompt),
};
