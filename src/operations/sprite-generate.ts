/**
 * sprite.generate: an animated sprite, one checkpointed step per frame, with engine exports.
 *
 * The result holds every frame as its own PNG file (`frames`), the frames packed into one atlas
 * (`atlas`), the frames side by side in horizontal strips (`strips`, several when one would be
 * wider than 4096 pixels), and `exports`: for each engine asked for, where each frame lies in the
 * atlas. Exports are text, not media (the media library keeps images, audio, video and models
 * only), so each one travels inline: `fileName` is the name to save `content` under (a JSON
 * object for phaser, unity and generic, the text of a Godot 4 `.tres` resource for godot), and
 * `imageFileName` the name under which the export expects the atlas PNG to be saved beside it.
 */
import type { TSchema } from 'typebox';
import { fileList, fileResult, resultObject, inputObject, integer, num, str, text, type OperationContract } from './contract.js';

export const SPRITE_ENGINES = ['godot', 'unity', 'phaser', 'generic'] as const;
export type SpriteEngine = (typeof SPRITE_ENGINES)[number];
const PER_FRAME_MC = 1500;
/** Frames of the animation when the input names none. */
const DEFAULT_FRAMES = 8;

/**
 * One engine's export. `format`, `frameWidth`, `frameHeight` and `frames` (each frame's place in
 * the atlas) are always there; `fileName`, `imageFileName`, `mediaType` and `content` (the
 * complete file for the engine) are produced by the sprites engine.
 */
const exportSchema = {
  type: 'object',
  properties: {
    format: { type: 'string', enum: [...SPRITE_ENGINES] },
    frameWidth: { type: 'integer', minimum: 1 },
    frameHeight: { type: 'integer', minimum: 1 },
    frames: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          index: { type: 'integer', minimum: 0 },
          x: { type: 'integer', minimum: 0 },
          y: { type: 'integer', minimum: 0 },
          width: { type: 'integer', minimum: 1 },
          height: { type: 'integer', minimum: 1 },
          durationMs: { type: 'integer', minimum: 1 },
        },
        required: ['index', 'x', 'y', 'durationMs'],
        additionalProperties: false,
      },
    },
    fileName: { type: 'string', description: 'The name to save `content` under.' },
    imageFileName: { type: 'string', description: 'The name the export expects the atlas PNG to be saved under, beside it.' },
    mediaType: { type: 'string' },
    content: {
      anyOf: [{ type: 'object' }, { type: 'string' }],
      description: 'The complete export: a JSON object (phaser, unity, generic) or the text of a Godot 4 SpriteFrames resource (godot).',
    },
  },
  required: ['format', 'frameWidth', 'frameHeight', 'frames'],
  additionalProperties: false,
};

export const spriteGenerate: OperationContract = {
  id: 'sprite.generate',
  toolSlug: 'sprite',
  summaryKey: 'tools.sprite.generate.summary',
  title: 'Generate an animated sprite',
  points: 200,
  typicalInput: { summary: '8 frames of 64×64', input: { prompt: 'a walking knight', frames: DEFAULT_FRAMES, frameWidth: 64, frameHeight: 64 } },
  asynchronous: true,
  inputSchema: inputObject(
    {
      prompt: text(1, 4000),
      frames: integer(1, 64, DEFAULT_FRAMES),
      frameWidth: integer(16, 512, 64),
      frameHeight: integer(16, 512, 64),
      engines: { type: 'array', items: { type: 'string', enum: [...SPRITE_ENGINES] }, minItems: 1, uniqueItems: true } as unknown as TSchema,
      padding: { ...(integer(0, 16, 2) as object), description: 'Transparent pixels between two frames of the atlas.' } as unknown as TSchema,
      powerOfTwo: { type: 'boolean', default: false, description: 'Make the atlas width and height powers of two.' } as unknown as TSchema,
    },
    ['prompt'],
  ),
  resultSchema: resultObject(
    {
      frames: fileList(),
      atlas: fileResult,
      strips: fileList(),
      frameMode: {
        type: 'string',
        enum: ['first-frame-reference', 'independent'],
        description: 'How the frames were kept alike: each frame after the first drawn from the first one as its reference image, or each drawn on its own (the provider takes no reference images).',
      },
      exports: {
        type: 'object',
        description:
          'Per engine asked for: each frame\'s place in the atlas and the complete export file (`content`, saved as `fileName` beside the atlas saved as `imageFileName`).',
        properties: Object.fromEntries(SPRITE_ENGINES.map((e) => [e, exportSchema])),
        additionalProperties: false,
      },
    },
    ['frames', 'atlas', 'strips', 'exports'],
  ),
  mediaFields: [],
  produces: 'image',
  price(input) {
    const cost = PER_FRAME_MC * num(input.frames, DEFAULT_FRAMES);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: (input) => {
    const frames = num(input.frames, DEFAULT_FRAMES);
    return { maximum: { frames }, typical: { frames } };
  },
  priceParams: ['perFrameMillicents'],
  steps: (input) => num(input.frames, DEFAULT_FRAMES),
  mainText: (input) => str(input.prompt),
};
