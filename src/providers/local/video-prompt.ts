/**
 * The plan of a video.edit `prompt` on the ffmpeg engine (issue 37; docs/decisions.md "Prompt-driven
 * video edits"): the chat model of the file's chat.generate entry, on an `openai` provider, turns
 * the prompt into edit steps, its answer constrained by the `edits` schema (structured output,
 * openai/structured.ts). The engine runs them with ffmpeg; the result's `steps` are what ran.
 *
 * Invariants:
 * - A plan runs only after it passed every rule an explicit `edits` input meets at admission (the
 *   same schema, compiled by the same validator, and the contract's `check`), names no media but
 *   the job's own inputs, and (in video-run.ts) builds an ffmpeg command for the probed videos.
 *   Anything else fails the job EDIT_PLAN_INVALID before ffmpeg is started.
 * - Price: the plan is one chat request whose input is bounded before the run (fixed instructions,
 *   a line of at most FACT_BYTES per input video, the caller's steps and prompt, the schema) and
 *   whose answer is bounded by PLAN_MAX_TOKENS; its maximum at the chat entry's prices is added
 *   to the ffmpeg maximum. It is charged its reported usage at those prices (the bounds without
 *   figures), never above that part's maximum, also when the plan is refused: the provider did
 *   the work.
 * - The chat call uses the chat provider's operator key: a local route has no personal keys.
 */
import { chatGenerate } from '../../operations/chat-generate.js';
import type { Price } from '../../operations/contract.js';
import { costOfUsage, priceOf } from '../../operations/pricing.js';
import { priceFromParams } from '../../operations/registry.js';
import { videoEdit, videoEditEdits, type VideoEdit } from '../../operations/video-edit.js';
import { compileStrict } from '../../http/validation.js';
import { structuredInputTokenBound, withoutNulls } from '../openai/structured.js';
import type { OperationRouteSpec, ProviderSpec } from '../specs.js';
import { ProviderError, type LocalContext, type OperationRoute, type Provider, type ProviderRun, type StructuredChatRequest } from '../types.js';

/** The bound of the plan's answer (tokens): 20 steps of JSON take well under half of it. */
export const PLAN_MAX_TOKENS = 2048;
/** The longest line of facts about one input video the model is given (ASCII, so bytes). */
export const FACT_BYTES = 160;
/** The name of the answer's schema in the request. */
const SCHEMA_NAME = 'video_edit_plan';
/** How the admission and the plan are told what to configure. */
export const PROMPT_NEEDS_CHAT =
  'A prompt is turned into edit steps by a chat model: map chat.generate to an openai (OpenAI-compatible) provider in the providers file (PROVIDERS_FILE, docs/providers.md), or give `edits` instead.';

/** The answer's schema: an object holding the `edits` list (structured output takes an object at the root). */
export const PLAN_SCHEMA = { type: 'object', properties: { edits: videoEditEdits }, required: ['edits'], additionalProperties: false };
const validatePlan = compileStrict(PLAN_SCHEMA);

const INSTRUCTIONS = [
  'You plan video edits for ffmpeg. Turn the instruction into a list of edit steps and answer with JSON {"edits": [...]} following the schema.',
  'Steps run in order, each on the video the steps before it made: times are seconds of the video at that step, sizes are even numbers of pixels, a crop lies inside the frame at that step.',
  'Use only the facts given about the videos. At most one format step. A concat step may append only a video listed below, by its id.',
  'When the caller gave steps, keep them in their order and add what the instruction asks.',
].join('\n');

/** What the model is told about one input video. */
export interface VideoFacts {
  mediaId: string;
  durationSeconds: number | undefined;
  width: number;
  height: number;
  hasAudio: boolean;
}

export interface PromptPlan {
  edits: VideoEdit[];
  costMillicents: number;
}

export interface PromptPlanner {
  /** Estimated and maximum cost of the plan of `input` at the chat entry's prices. */
  price(input: Record<string, unknown>): Price;
  /**
   * Asks the chat model for the plan (`facts`: the job's input videos, the main one first) and
   * checks it; throws ProviderError EDIT_PLAN_INVALID (or the call's failure) carrying the cost
   * of the call. Charged at most `maximumMillicents`.
   */
  plan(job: ProviderRun, facts: VideoFacts[], maximumMillicents: number): Promise<PromptPlan>;
}

/** The planner of the file's chat.generate entry, or undefined when it is not an openai provider's. */
export function promptPlanner(ctx: LocalContext): PromptPlanner | undefined {
  const entry = ctx.operations.get('chat.generate');
  const provider = entry ? ctx.providers.get(entry.provider) : undefined;
  const adapter = entry ? ctx.adapters.get(entry.provider) : undefined;
  if (!entry || !provider || provider.type !== 'openai' || !adapter?.structuredChat || !entry.price || !entry.model) return undefined;
  const params = entry.price;
  const route = chatRoute(entry, provider, adapter);
  const structuredChat = adapter.structuredChat.bind(adapter);

  /** The chat request's bounds: every fact line at its longest. */
  const price = (input: Record<string, unknown>): Price => {
    const inputTokens = structuredInputTokenBound(planRequest(input, inputIds(input).map(() => 'x'.repeat(FACT_BYTES))));
    return priceOf(params, { maximum: { inputTokens, outputTokens: PLAN_MAX_TOKENS }, typical: { inputTokens: Math.ceil(inputTokens / 4), outputTokens: Math.ceil(PLAN_MAX_TOKENS / 4) } }, 0);
  };

  return {
    price,
    async plan(job, facts, maximumMillicents) {
      const cap = Math.max(0, Math.min(maximumMillicents, price(job.input).maximumMillicents));
      const request = planRequest(job.input, facts.map(factLine));
      const answer = await structuredChat(chatRun(job, route, provider, request, (used) => costOfUsage(params, used, cap), cap), request);
      const cost = answer.costMillicents;
      if (answer.refused) throw new ProviderError('PROVIDER_REJECTED', 'The chat model declined to plan the edit (it refused the prompt).', cost);
      if (answer.value === undefined) {
        throw new ProviderError('EDIT_PLAN_INVALID', `The chat model's plan is not JSON${answer.finishReason === 'length' ? ' (it was cut off at the token bound)' : ''}; nothing was run.`, cost);
      }
      const checked = planProblems(answer.value, facts.map((f) => f.mediaId));
      if (typeof checked === 'string') throw new ProviderError('EDIT_PLAN_INVALID', `The chat model's plan was refused, nothing was run: ${checked}`, cost);
      return { edits: checked.edits, costMillicents: cost };
    },
  };
}

/**
 * The checked plan, or what is wrong with it: the `edits` schema (defaults filled in, as at
 * admission), the contract's own rules, and concat steps naming only the job's input videos.
 */
export function planProblems(value: unknown, inputs: readonly string[]): { edits: VideoEdit[] } | string {
  const plan = withoutNulls(value) as { edits?: unknown };
  if (!validatePlan(plan)) {
    return (validatePlan.errors ?? []).slice(0, 3).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`).join('; ');
  }
  const broken = videoEdit.check?.({ edits: plan.edits }) ?? [];
  if (broken.length > 0) return broken.slice(0, 3).map((e) => `${e.pointer} ${e.message}`).join('; ');
  const known = new Set(inputs.map((id) => id.toLowerCase()));
  const edits = plan.edits as VideoEdit[];
  const stranger = edits.findIndex((e) => e.type === 'concat' && !known.has(e.mediaId.toLowerCase()));
  if (stranger >= 0) return `/edits/${stranger}/mediaId names a video that is not an input of the job`;
  return { edits };
}

/** The ids of the job's input videos, each once, the main one first (as the engine reads them). */
export function inputIds(input: Record<string, unknown>): string[] {
  const edits = Array.isArray(input.edits) ? (input.edits as VideoEdit[]) : [];
  const ids = [String(input.mediaId), ...edits.flatMap((e) => (e.type === 'concat' ? [e.mediaId] : []))];
  const seen = new Set<string>();
  return ids.filter((id) => !seen.has(id.toLowerCase()) && seen.add(id.toLowerCase()));
}

/** One video's facts, at most FACT_BYTES of ASCII. */
export function factLine(f: VideoFacts): string {
  const seconds = f.durationSeconds === undefined ? 'length unknown' : `${(Math.round(f.durationSeconds * 1000) / 1000).toFixed(3)} s`;
  return `${f.mediaId}: ${seconds}, ${f.width}x${f.height} pixels, ${f.hasAudio ? 'with sound' : 'no sound'}`.slice(0, FACT_BYTES);
}

/** The chat request of a plan: fixed instructions, then the videos, the caller's steps and the prompt. */
function planRequest(input: Record<string, unknown>, lines: string[]): StructuredChatRequest {
  const given = Array.isArray(input.edits) && input.edits.length > 0 ? JSON.stringify(input.edits) : 'none';
  const user = [
    'Videos (the first is the one to edit):',
    ...lines.map((l) => `- ${l}`),
    `Steps the caller gave: ${given}`,
    `Instruction: ${typeof input.prompt === 'string' ? input.prompt : ''}`,
  ].join('\n');
  return {
    messages: [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: user },
    ],
    maxTokens: PLAN_MAX_TOKENS,
    name: SCHEMA_NAME,
    schema: PLAN_SCHEMA,
  };
}

/** The chat.generate route the plan is asked on (the file's entry; personal keys play no part). */
function chatRoute(entry: OperationRouteSpec, provider: ProviderSpec, adapter: Provider): OperationRoute {
  const params = entry.price!;
  return {
    operation: chatGenerate,
    providerName: provider.name,
    providerType: provider.type,
    personalKeys: false,
    model: entry.model ?? null,
    adapter,
    spec: entry,
    provider,
    price: (input) => priceFromParams(params, 'chat.generate', input, entry.timeoutSeconds),
    charge: (used, maximum) => costOfUsage(params, used, maximum),
    steps: () => 1,
    inputSchema: chatGenerate.inputSchema,
  };
}

/** The chat call's run inside the video job's attempt: its signal, its media, the operator's key. */
function chatRun(job: ProviderRun, route: OperationRoute, provider: ProviderSpec, request: StructuredChatRequest, charge: ProviderRun['charge'], maximumMillicents: number): ProviderRun {
  return {
    jobId: job.jobId,
    workspaceId: job.workspaceId,
    operation: chatGenerate,
    input: { messages: request.messages, maxTokens: request.maxTokens },
    attempt: job.attempt,
    stepsTotal: 1,
    stepsDone: 0,
    state: {},
    checkpointedFiles: () => [],
    maximumMillicents,
    signal: job.signal,
    route,
    funding: 'credits',
    apiKey: provider.apiKey?.reveal(),
    media: job.media,
    isVerifiedHost: job.isVerifiedHost,
    charge,
    progress: async () => {},
    checkpoint: async () => {},
  };
}
