/**
 * video.edit: edits one video by a prompt, by a list of edit steps, or both. Edit steps apply in
 * the order given, each to the video the steps before it produced: trim, resize (with a fit),
 * crop, mute, speed, format (the output container) and concat (another video appended there).
 *
 * A `prompt` is turned into edit steps by a chat model where the route has one (the ffmpeg
 * engine: providers/local/video-prompt.ts; the simulated provider: sim-edit-plan.ts); the result's
 * `steps` are the steps that ran (absent from results made before they were reported).
 *
 * Invariant: an input this contract accepts (schema and `check`) names a plan every engine can
 * read without guessing: a trim ends after it starts, at most one step picks the container, and
 * even pixel sizes wherever a step sets them (4:2:0 video needs them).
 */
import type { TSchema } from 'typebox';
import { fileResult, resultObject, list, str, text, uuidSchema, noQuantities, EXAMPLE_MEDIA_ID, type OperationContract } from './contract.js';

/** Largest pixel size a resize or a crop may ask for (a side). */
export const MAX_EDIT_SIDE = 4096;
export const MIN_SPEED = 0.25;
export const MAX_SPEED = 4;
export const VIDEO_CONTAINERS = ['mp4', 'webm', 'gif'] as const;
export type VideoContainer = (typeof VIDEO_CONTAINERS)[number];

const evenSide = (min: number) => ({ type: 'integer', minimum: min, maximum: MAX_EDIT_SIDE, multipleOf: 2 });
const seconds = { type: 'number', minimum: 0, maximum: 86_400 };

/** One edit step, told apart by `type`. */
export type VideoEdit =
  | { type: 'trim'; startSeconds: number; endSeconds: number }
  | { type: 'resize'; width: number; height: number; fit?: 'contain' | 'cover' | 'fill' }
  | { type: 'crop'; x: number; y: number; width: number; height: number }
  | { type: 'mute' }
  | { type: 'speed'; factor: number }
  | { type: 'format'; container: VideoContainer }
  | { type: 'concat'; mediaId: string };

const edit = {
  oneOf: [
    {
      type: 'object',
      description: 'Keeps the part from startSeconds to endSeconds (of the video as the steps before made it).',
      properties: { type: { const: 'trim' }, startSeconds: seconds, endSeconds: { ...seconds, exclusiveMinimum: 0 } },
      required: ['type', 'startSeconds', 'endSeconds'],
      additionalProperties: false,
    },
    {
      type: 'object',
      description: 'Makes the frame width×height (even numbers): contain letterboxes the picture, cover fills and crops, fill stretches.',
      properties: {
        type: { const: 'resize' },
        width: evenSide(16),
        height: evenSide(16),
        fit: { type: 'string', enum: ['contain', 'cover', 'fill'], default: 'contain' },
      },
      required: ['type', 'width', 'height'],
      additionalProperties: false,
    },
    {
      type: 'object',
      description: 'Keeps the width×height rectangle (even numbers) whose top-left corner is at x, y; it must lie inside the frame.',
      properties: {
        type: { const: 'crop' },
        x: { type: 'integer', minimum: 0, maximum: 16_384 },
        y: { type: 'integer', minimum: 0, maximum: 16_384 },
        width: evenSide(16),
        height: evenSide(16),
      },
      required: ['type', 'x', 'y', 'width', 'height'],
      additionalProperties: false,
    },
    { type: 'object', description: 'The result has no sound (wherever this step appears).', properties: { type: { const: 'mute' } }, required: ['type'], additionalProperties: false },
    {
      type: 'object',
      description: 'Plays factor times as fast (0.5 is half speed); the sound keeps its pitch.',
      properties: { type: { const: 'speed' }, factor: { type: 'number', minimum: 0.25, maximum: 4 } },
      required: ['type', 'factor'],
      additionalProperties: false,
    },
    {
      type: 'object',
      description: 'The container of the result (once per list): mp4 (H.264, AAC), webm (VP9, Opus) or gif (no sound); by default the input\'s.',
      properties: { type: { const: 'format' }, container: { type: 'string', enum: [...VIDEO_CONTAINERS] } },
      required: ['type', 'container'],
      additionalProperties: false,
    },
    {
      type: 'object',
      description: 'Appends another video of the workspace here, fitted into the current frame (contain).',
      properties: { type: { const: 'concat' }, mediaId: uuidSchema },
      required: ['type', 'mediaId'],
      additionalProperties: false,
    },
  ],
};

export const videoEditEdits = { type: 'array', items: edit, minItems: 1, maxItems: 20 };

/** Rules of the edit list a JSON Schema cannot say. */
function checkEdits(input: Record<string, unknown>): { pointer: string; message: string }[] {
  const broken: { pointer: string; message: string }[] = [];
  let formats = 0;
  list(input.edits).forEach((raw, i) => {
    const e = raw as Partial<Record<string, unknown>>;
    if (e.type === 'trim' && typeof e.startSeconds === 'number' && typeof e.endSeconds === 'number' && e.endSeconds <= e.startSeconds) {
      broken.push({ pointer: `/edits/${i}/endSeconds`, message: 'A trim must end after it starts (endSeconds > startSeconds).' });
    }
    if (e.type === 'format' && ++formats === 2) {
      broken.push({ pointer: `/edits/${i}`, message: 'The container is chosen once: at most one format step.' });
    }
  });
  return broken;
}

export const videoEdit: OperationContract = {
  id: 'video.edit',
  toolSlug: 'video',
  summaryKey: 'tools.video.edit.summary',
  title: 'Edit a video',
  points: 120,
  typicalInput: {
    summary: 'two edit steps (trim, resize)',
    input: { mediaId: EXAMPLE_MEDIA_ID, edits: [{ type: 'trim', startSeconds: 0, endSeconds: 5 }, { type: 'resize', width: 640, height: 360 }] },
  },
  asynchronous: true,
  inputSchema: {
    type: 'object',
    properties: {
      mediaId: uuidSchema,
      prompt: text(1, 4000),
      edits: videoEditEdits,
    },
    required: ['mediaId'],
    anyOf: [{ required: ['prompt'] }, { required: ['edits'] }],
    additionalProperties: false,
  } as unknown as TSchema,
  resultSchema: resultObject(
    {
      // A gif result is an image file (image/gif); every other container is a video file.
      video: fileResult,
      durationSeconds: { type: 'number', minimum: 0 },
      width: { type: 'integer', minimum: 1 },
      height: { type: 'integer', minimum: 1 },
      hasAudio: { type: 'boolean' },
      steps: { ...videoEditEdits, description: 'The edit steps that ran, in order: the `edits` given, or the plan the chat model made of the `prompt`.' },
    },
    ['video'],
  ),
  mediaFields: [
    { field: 'mediaId', multiple: false, kinds: ['video'] },
    { field: 'edits', within: 'mediaId', multiple: true, kinds: ['video'] },
  ],
  produces: 'video',
  price(input) {
    const cost = 5000 + 2000 * list(input.edits).length + (str(input.prompt) ? 20_000 : 0);
    return { estimatedMillicents: cost, maximumMillicents: cost };
  },
  quantities: noQuantities,
  priceParams: [],
  steps: (input) => Math.max(1, list(input.edits).length + (str(input.prompt) ? 1 : 0)),
  check: checkEdits,
  mainText: (input) => str(input.prompt),
};
