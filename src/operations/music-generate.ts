/** music.generate: a music track from a prompt. */
import { fileResult, resultObject, inputObject, integer, num, oneOf, str, text, type OperationContract } from './contract.js';

const PER_SECOND_MC = 500;

export const musicGenerate: OperationContract = {
  id: 'music.generate',
  toolSlug: 'music',
  summaryKey: 'tools.music.generate.summary',
  asynchronous: true,
  inputSchema: inputObject({ prompt: text(1, 4000), durationSeconds: integer(5, 180, 30), format: oneOf(['mp3', 'wav'], 'mp3') }, ['prompt']),
  resultSchema: resultObject({ audio: fileResult, durationSeconds: { type: 'number', minimum: 0 } }, ['audio']),
  mediaFields: [],
  produces: 'audio',
  price(input) {
    const cost = PER_SECOND_MC * num(input.durationSeconds, 30);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  steps: () => 1,
  mainText: (input) => str(input.prompt),
};
