/** music.generate: a music track from a prompt. */
import { fileResult, resultObject, inputObject, integer, num, oneOf, str, text, type OperationContract } from './contract.js';

const PER_SECOND_MC = 500;
/** Seconds of music when the input names none. */
const DEFAULT_SECONDS = 30;

export const musicGenerate: OperationContract = {
  id: 'music.generate',
  toolSlug: 'music',
  summaryKey: 'tools.music.generate.summary',
  title: 'Generate music',
  points: 50,
  typicalInput: { summary: '30 seconds of music', input: { prompt: 'a calm piano tune', durationSeconds: DEFAULT_SECONDS, format: 'mp3' } },
  asynchronous: true,
  inputSchema: inputObject({ prompt: text(1, 4000), durationSeconds: integer(5, 180, DEFAULT_SECONDS), format: oneOf(['mp3', 'wav'], 'mp3') }, ['prompt']),
  resultSchema: resultObject({ audio: fileResult, durationSeconds: { type: 'number', minimum: 0 } }, ['audio']),
  mediaFields: [],
  produces: 'audio',
  price(input) {
    const cost = PER_SECOND_MC * num(input.durationSeconds, DEFAULT_SECONDS);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: (input) => {
    const seconds = num(input.durationSeconds, DEFAULT_SECONDS);
    return { maximum: { seconds }, typical: { seconds } };
  },
  priceParams: ['perSecondMillicents'],
  steps: () => 1,
  mainText: (input) => str(input.prompt),
};
