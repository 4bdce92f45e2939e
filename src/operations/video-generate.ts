/** video.generate: a video from a prompt, rendered in one-second segments (checkpointed steps). */
import { fileResult, resultObject, inputObject, integer, num, oneOf, str, text, uuidList, type OperationContract } from './contract.js';

const PER_SECOND_MC = 10_000;
/** Seconds of video when the input names none. */
const DEFAULT_SECONDS = 5;

export const videoGenerate: OperationContract = {
  id: 'video.generate',
  toolSlug: 'video',
  summaryKey: 'tools.video.generate.summary',
  title: 'Generate a video',
  points: 100,
  typicalInput: { summary: 'a 5-second 16:9 clip', input: { prompt: 'waves on a beach', durationSeconds: DEFAULT_SECONDS, aspectRatio: '16:9' } },
  asynchronous: true,
  inputSchema: inputObject(
    {
      prompt: text(1, 4000),
      durationSeconds: integer(1, 20, DEFAULT_SECONDS),
      aspectRatio: oneOf(['16:9', '9:16', '1:1'], '16:9'),
      referenceMediaIds: uuidList(0, 4),
    },
    ['prompt'],
  ),
  resultSchema: resultObject({ video: fileResult, durationSeconds: { type: 'number', minimum: 0 } }, ['video']),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }],
  produces: 'video',
  price(input) {
    const cost = PER_SECOND_MC * num(input.durationSeconds, DEFAULT_SECONDS);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: (input) => {
    const seconds = num(input.durationSeconds, DEFAULT_SECONDS);
    return { maximum: { seconds }, typical: { seconds } };
  },
  priceParams: ['perSecondMillicents'],
  steps: (input) => num(input.durationSeconds, DEFAULT_SECONDS),
  mainText: (input) => str(input.prompt),
};
