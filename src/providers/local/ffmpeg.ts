/**
 * The `ffmpeg` local engine: video.edit on the service's own machine. It honours `edits` only (a
 * `prompt` needs a generative model), so the input schema it serves makes `edits` required and
 * leaves `prompt` out: a run with a prompt is 400 INVALID_INPUT before anything is reserved.
 *
 * Pricing: per output second (`perSecondMillicents`). The output is cut at the route's
 * `maxOutputSeconds`, so that is the bound of a run, unless the edits bound it tighter (a trim
 * with no later concat); the charge is the length ffprobe reads from the file produced.
 *
 * Error codes of failed jobs (besides PROVIDER_TIMEOUT and OUTPUT_TOO_LARGE):
 *   MEDIA_UNREADABLE   an input is not a video ffmpeg can decode (corrupt, truncated, no video
 *                      stream, zero size)
 *   MEDIA_TOO_LARGE    an input's frame is beyond MAX_INPUT_SIDE / MAX_INPUT_PIXELS
 *   EDIT_OUT_OF_FRAME  a crop reaches outside the frame of the video at that step
 *   EMPTY_OUTPUT       the edits leave nothing (a trim after the end)
 *   PROVIDER_ERROR     ffmpeg failed for another reason
 */
import type { TSchema } from 'typebox';
import type { OperationContract } from '../../operations/contract.js';
import type { VideoEdit } from '../../operations/video-edit.js';
import type { LocalContext } from '../types.js';
import type { Provider } from '../types.js';
import { editBoundSeconds } from './video-plan.js';
import { runVideoEdit } from './video-run.js';

/** The schema this engine honours: the operation's, with `edits` required and no `prompt`. */
export function ffmpegInputSchema(op: OperationContract): TSchema {
  const base = op.inputSchema as unknown as { properties: Record<string, unknown>; anyOf?: unknown; description?: string };
  const { prompt: _prompt, ...properties } = base.properties;
  const { anyOf: _anyOf, ...rest } = base;
  return {
    ...rest,
    description:
      'Edits a video with ffmpeg on this deployment: `edits` is required and applied in order; `prompt` is not accepted (it needs a generative model, which this engine is not).',
    properties,
    required: ['mediaId', 'edits'],
  } as unknown as TSchema;
}

export function ffmpegEngine(ctx: LocalContext): Provider {
  return {
    name: 'local',
    // One ffmpeg command does every edit: nothing in between is worth keeping on a retry.
    steps: () => 1,
    inputSchema: ffmpegInputSchema,
    maximumQuantities: (_op, input) => ({ seconds: Math.min(ctx.spec.maxOutputSeconds, editBoundSeconds((input.edits ?? []) as VideoEdit[])) }),
    run: (job) => runVideoEdit(ctx, job),
  };
}
