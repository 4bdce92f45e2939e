/** speech.generate: text to speech; produces an audio file. */
import { fileResult, resultObject, inputObject, oneOf, str, text, uuidSchema, type OperationContract } from './contract.js';
import type { TSchema } from 'typebox';
import { characterCount } from './pricing.js';

const PER_CHARACTER_MC = 3;

/** A workspace voice made by voice.clone (GET /v1/voices); only on routes whose provider takes reference voices. */
const VOICE_ID = { ...(uuidSchema as object), description: 'A workspace voice (made by voice.clone, listed by GET /v1/voices) to speak with.' } as unknown as TSchema;

export const speechGenerate: OperationContract = {
  id: 'speech.generate',
  toolSlug: 'speech',
  summaryKey: 'tools.speech.generate.summary',
  title: 'Generate speech from text',
  points: 15,
  typicalInput: { summary: '1,000 characters of text', input: { text: 'x'.repeat(1000), format: 'mp3' } },
  asynchronous: true,
  inputSchema: inputObject({ text: text(1, 5000), voice: text(1, 64), voiceId: VOICE_ID, format: oneOf(['mp3', 'wav'], 'mp3') }, ['text']),
  resultSchema: resultObject(
    {
      audio: fileResult,
      durationSeconds: { type: 'number', minimum: 0 },
      format: { type: 'string' },
      characters: { type: 'integer', minimum: 0 },
      voiceId: { type: 'string', format: 'uuid', description: 'The workspace voice it spoke with, when the input named one.' },
    },
    ['audio'],
  ),
  mediaFields: [],
  voiceField: 'voiceId',
  check: (input) => (input.voice !== undefined && input.voiceId !== undefined ? [{ pointer: '/voiceId', message: 'give voice (a provider voice) or voiceId (a workspace voice), not both' }] : []),
  produces: 'audio',
  price(input) {
    // Characters as the contract counts them (Unicode code points: an emoji is one), as providers do.
    const cost = 100 + characterCount(input.text) * PER_CHARACTER_MC;
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: (input) => {
    const characters = characterCount(input.text);
    return { maximum: { characters }, typical: { characters } };
  },
  priceParams: ['perThousandCharactersMillicents'],
  steps: () => 1,
  mainText: (input) => str(input.text),
};
