/** sprite.generate: an animated sprite, one checkpointed step per frame, with engine exports. */
import type { TSchema } from 'typebox';
import { fileList, fileResult, resultObject, inputObject, integer, num, str, text, type OperationContract } from './contract.js';

export const SPRITE_ENGINES = ['godot', 'unity', 'phaser', 'generic'] as const;
const PER_FRAME_MC = 1500;

export const spriteGenerate: OperationContract = {
  id: 'sprite.generate',
  toolSlug: 'sprite',
  summaryKey: 'tools.sprite.generate.summary',
  asynchronous: true,
  inputSchema: inputObject(
    {
      prompt: text(1, 4000),
      frames: integer(1, 64, 8),
      frameWidth: integer(16, 512, 64),
      frameHeight: integer(16, 512, 64),
      engines: { type: 'array', items: { type: 'string', enum: [...SPRITE_ENGINES] }, minItems: 1, uniqueItems: true } as unknown as TSchema,
    },
    ['prompt'],
  ),
  resultSchema: resultObject(
    {
      frames: fileList(),
      atlas: fileResult,
      strips: fileList(),
      exports: { type: 'object', additionalProperties: { type: 'object' } },
    },
    ['frames', 'atlas', 'strips', 'exports'],
  ),
  mediaFields: [],
  produces: 'image',
  price(input) {
    const cost = PER_FRAME_MC * num(input.frames, 8);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  steps: (input) => num(input.frames, 8),
  mainText: (input) => str(input.prompt),
};
