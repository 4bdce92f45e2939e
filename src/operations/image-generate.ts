/** image.generate: images from a prompt, optionally guided by reference images; one step per image. */
import { fileList, resultObject, inputObject, integer, num, str, text, uuidList, type OperationContract } from './contract.js';

const PER_MEGAPIXEL_MC = 4000;

export const imageGenerate: OperationContract = {
  id: 'image.generate',
  toolSlug: 'image',
  summaryKey: 'tools.image.generate.summary',
  title: 'Generate images',
  points: 25,
  typicalInput: { summary: 'one 1024×1024 image', input: { prompt: 'a lighthouse at dawn', width: 1024, height: 1024, count: 1 } },
  asynchronous: true,
  inputSchema: inputObject(
    {
      prompt: text(1, 4000),
      width: integer(256, 2048, 1024),
      height: integer(256, 2048, 1024),
      count: integer(1, 4, 1),
      referenceMediaIds: uuidList(0, 4),
    },
    ['prompt'],
  ),
  resultSchema: resultObject(
    {
      images: fileList(),
      // How the images were made when the provider's model takes fixed sizes (docs/providers.md):
      // the size asked of it, and the resize that made the size the input asked for.
      imageSize: {
        type: 'object',
        properties: {
          requested: { type: 'string', pattern: '^[0-9]+x[0-9]+$' },
          generated: { type: 'string', pattern: '^[0-9]+x[0-9]+$' },
          resize: { type: 'string', enum: ['none', 'cover'] },
          requests: { type: 'integer', minimum: 1 },
        },
        required: ['requested', 'generated', 'resize', 'requests'],
        additionalProperties: false,
      },
    },
    ['images'],
  ),
  mediaFields: [{ field: 'referenceMediaIds', multiple: true, kinds: ['image'] }],
  produces: 'image',
  price(input) {
    const megapixels = (num(input.width, 1024) * num(input.height, 1024)) / (1024 * 1024);
    const cost = Math.ceil(PER_MEGAPIXEL_MC * megapixels) * num(input.count, 1);
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
