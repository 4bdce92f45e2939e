/** headshot.generate: portrait images from 1 to 10 reference photos; one step per image. */
import { fileList, resultObject, inputObject, integer, num, str, text, uuidList, EXAMPLE_MEDIA_IDS, type OperationContract } from './contract.js';

const PER_IMAGE_MC = 8000;

export const headshotGenerate: OperationContract = {
  id: 'headshot.generate',
  toolSlug: 'image',
  summaryKey: 'tools.headshot.generate.summary',
  title: 'Generate headshots from photos',
  points: 35,
  typicalInput: { summary: 'one headshot from 3 photos', input: { referenceMediaIds: [...EXAMPLE_MEDIA_IDS], count: 1 } },
  asynchronous: true,
  inputSchema: inputObject({ referenceMediaIds: uuidList(1, 10), prompt: text(1, 4000, 'style'), count: integer(1, 4, 1) }, ['referenceMediaIds']),
  resultSchema: resultObject({ images: fileList() }, ['images']),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }],
  produces: 'image',
  price(input) {
    const cost = PER_IMAGE_MC * num(input.count, 1);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: (input) => {
    const images = num(input.count, 1);
    return { maximum: { images }, typical: { images } };
  },
  priceParams: ['perImageMillicents'],
  steps: (input) => num(input.count, 1),
  mainText: (input) => str(input.prompt),
};
