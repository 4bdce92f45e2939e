/** three-d.rig: adds a skeleton to a GLB model. */
import { fileResult, resultObject, inputObject, str, text, uuidSchema, noQuantities, EXAMPLE_MEDIA_ID, type OperationContract } from './contract.js';

export const threeDRig: OperationContract = {
  id: 'three-d.rig',
  toolSlug: 'three-d',
  summaryKey: 'tools.three-d.rig.summary',
  title: 'Rig a 3D model',
  points: 50,
  typicalInput: { summary: 'one model', input: { mediaId: EXAMPLE_MEDIA_ID } },
  asynchronous: true,
  inputSchema: inputObject({ mediaId: uuidSchema, prompt: text(1, 4000) }, ['mediaId']),
  resultSchema: resultObject({ glb: fileResult, joints: { type: 'integer', minimum: 1, description: 'How many joints the skeleton has (the local rigger reports it).' } }, ['glb']),
  mediaFields: [{ field: 'mediaId', multiple: false, kinds: ['model'] }],
  produces: 'model',
  price: () => ({ estimatedMillicents: 20_000, maximumMillicents: 20_000 }),
  quantities: noQuantities,
  priceParams: [],
  steps: () => 1,
  mainText: (input) => str(input.prompt),
};
