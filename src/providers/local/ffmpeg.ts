/**
 * The `ffmpeg` local engine: video.edit on the service's own machine. It runs `edits`; a `prompt`
 * (with or without `edits`) is turned into edit steps by the chat model of the file's
 * chat.generate entry when that is an openai provider (video-prompt.ts). Without one, the input
 * schema it serves makes `edits` required and leaves `prompt` out, and admission refuses a
 * prompt (400 INVALID_INPUT at /input/prompt) saying what to configure, before anything is
 * reserved.
 *
 * Pricing: per output second (`perSecondMillicents`). The output is cut at the route's
 * `maxOutputSeconds`, so that is the bound of a run, unless the edits bound it tighter (a trim
 * with no later concat; never with a prompt, whose steps are not known before the run); the charge
 * is the length ffprobe reads from the file produced. A prompt adds its plan: the chat request's
 * maximum at the chat entry's prices, and its usage at them (checkpointed with the plan, so an
 * attempt that takes the job over, or a retry, neither asks nor pays again).
 *
 * Error codes of failed jobs (besides PROVIDER_TIMEOUT and OUTPUT_TOO_LARGE):
 *   MEDIA_UNREADABLE   an input is not a video ffmpeg can decode (corrupt, truncated, no video
 *                      stream, zero size)
 *   MEDIA_TOO_LARGE    an input's frame is beyond MAX_INPUT_SIDE / MAX_INPUT_PIXELS
 *   EDIT_OUT_OF_FRAME  a crop reaches outside the frame of the video at that step
 *   EDIT_PLAN_INVALID  the chat model's plan of a prompt failed a check (nothing was run)
 *   EMPTY_OUTPUT       the edits leave nothing (a trim after the end)
 *   PROVIDER_ERROR     ffmpeg failed for another reason
 * and the chat call's own failures (PROVIDER_RATE_LIMITED, PROVIDER_REJECTED …) while planning.
 */
import type { TSchema } from 'typebox';
import type { OperationContract } from '../../operations/contract.js';
import type { VideoEdit } from '../../operations/video-edit.js';
import type { LocalContext } from '../types.js';
import type { Provider } from '../types.js';
import { editBoundSeconds } from './video-plan.js';
import { PROMPT_NEEDS_CHAT, promptPlanner, type PromptPlanner } from './video-prompt.js';
import { runVideoEdit } from './video-run.js';

const hasPrompt = (input: Record<string, unknown>) => typeof input.prompt === 'string';

/**
 * The schema this engine honours: with a planner, the operation's (`prompt`, `edits` or both);
 * without, `edits` required and no `prompt`.
 */
export function ffmpegInputSchema(op: OperationContract, planner?: PromptPlanner): TSchema {
  const base = op.inputSchema as unknown as { properties: Record<string, unknown>; anyOf?: unknown; description?: string };
  if (planner) {
    return {
      ...base,
      description:
        'Edits a video with ffmpeg on this deployment: `edits` are applied in order; a `prompt` is first turned into edit steps by the deployment\'s chat model (keeping any `edits` given). The result\'s `steps` are the steps that ran.',
    } as unknown as TSchema;
  }
  const { prompt: _prompt, ...properties } = base.properties;
  const { anyOf: _anyOf, ...rest } = base;
  return {
    ...rest,
    description: `Edits a video with ffmpeg on this deployment: \`edits\` is required and applied in order; \`prompt\` is not accepted here. ${PROMPT_NEEDS_CHAT}`,
    properties,
    required: ['mediaId', 'edits'],
  } as unknown as TSchema;
}

export function ffmpegEngine(ctx: LocalContext): Provider {
  const planner = promptPlanner(ctx);
  return {
    name: 'local',
    // One ffmpeg command does every edit: nothing in between is worth keeping on a retry. A
    // prompt's plan is checkpointed in the step's state with its cost (not charged twice).
    steps: () => 1,
    inputSchema: (op) => ffmpegInputSchema(op, planner),
    maximumQuantities: (_op, input) => ({
      seconds: hasPrompt(input) ? ctx.spec.maxOutputSeconds : Math.min(ctx.spec.maxOutputSeconds, editBoundSeconds((input.edits ?? []) as VideoEdit[])),
    }),
    ...(planner
      ? { addedPrice: (_op, input) => (hasPrompt(input) ? planner.price(input) : undefined) }
      : { refuseInput: (_op, input) => (input.prompt !== undefined ? [{ pointer: '/prompt', message: PROMPT_NEEDS_CHAT }] : []) }),
    run: (job) => runVideoEdit(ctx, job, planner),
  };
}
