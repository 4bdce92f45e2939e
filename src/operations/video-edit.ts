/** video.edit: edits one video by a prompt, by a list of edit steps, or both. */
import type { TSchema } from 'typebox';
import { fileResult, resultObject, list, str, text, uuidSchema, type OperationContract } from './contract.js';

const edit = {
  oneOf: [
    {
      type: 'object',
      properties: { type: { const: 'trim' }, startSeconds: { type: 'number', minimum: 0 }, endSeconds: { type: 'number', exclusiveMinimum: 0 } },
      required: ['type', 'startSeconds', 'endSeconds'],
      additionalProperties: false,
    },
    {
      type: 'object',
      properties: { type: { const: 'resize' }, width: { type: 'integer', minimum: 16, maximum: 4096 }, height: { type: 'integer', minimum: 16, maximum: 4096 } },
      required: ['type', 'width', 'height'],
      additionalProperties: false,
    },
    { type: 'object', properties: { type: { const: 'mute' } }, required: ['type'], additionalProperties: false },
    {
      type: 'object',
      properties: { type: { const: 'format' }, container: { type: 'string', enum: ['mp4', 'webm'] } },
      required: ['type', 'container'],
      additionalProperties: false,
    },
  ],
};

export const videoEdit: OperationContract = {
  id: 'video.edit',
  toolSlug: 'video',
  summaryKey: 'tools.video.edit.summary',
  asynchronous: true,
  inputSchema: {
    type: 'object',
    properties: {
      mediaId: uuidSchema,
      prompt: text(1, 4000),
      edits: { type: 'array', items: edit, minItems: 1, maxItems: 20 },
    },
    required: ['mediaId'],
    anyOf: [{ required: ['prompt'] }, { required: ['edits'] }],
    additionalProperties: false,
  } as unknown as TSchema,
  resultSchema: resultObject({ video: fileResult, durationSeconds: { type: 'number', minimum: 0 } }, ['video']),
  mediaFields: [{ field: 'mediaId', multiple: false, kinds: ['video'] }],
  produces: 'video',
  price(input) {
    const cost = 5000 + 2000 * list(input.edits).length + (str(input.prompt) ? 20_000 : 0);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  steps: (input) => Math.max(1, list(input.edits).length + (str(input.prompt) ? 1 : 0)),
  mainText: (input) => str(input.prompt),
};
