/** three-d.generate: a 3D model (glTF binary, GLB) from a prompt, reference images, or both. */
import type { TSchema } from 'typebox';
import { fileResult, resultObject, str, text, uuidList, noQuantities, type OperationContract } from './contract.js';

export const threeDGenerate: OperationContract = {
  id: 'three-d.generate',
  toolSlug: 'three-d',
  summaryKey: 'tools.three-d.generate.summary',
  title: 'Generate a 3D model (GLB)',
  points: 100,
  typicalInput: { summary: 'one model from a prompt', input: { prompt: 'a wooden chair' } },
  asynchronous: true,
  inputSchema: {
    type: 'object',
    properties: { prompt: text(1, 4000), referenceMediaIds: uuidList(1, 4) },
    required: [],
    anyOf: [{ required: ['prompt'] }, { required: ['referenceMediaIds'] }],
    additionalProperties: false,
  } as unknown as TSchema,
  resultSchema: resultObject({ glb: fileResult }, ['glb']),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }],
  produces: 'model',
  price: () => ({ estimatedMillicents: 30_000, maximumMillicents: 30_000 }),
  quantities: noQuantities,
  priceParams: [],
  steps: () => 1,
  mainText: (input) => str(input.prompt),
};
