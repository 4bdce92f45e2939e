/**
 * chat.generate on an `openai` provider, streamed: POST /chat/completions with `stream: true` and
 * `stream_options: {include_usage: true}`, for a caller that takes the reply as it is generated
 * (ProviderRun.onText). The answer is the provider's own stream of `chat.completion.chunk`
 * events (read by the `openai` package from the body egress-fetch.ts hands over at the answer's
 * head); each chunk's text goes to onText at once. The result, its usage and its cost are the
 * ones the JSON call gives for the same answer (chat.ts): the usage of the final chunk, or without
 * it the bound.
 *
 * A call stopped by its caller (the client gone, the synchronous run's deadline) aborts the
 * request through the egress client and throws ProviderInterrupted with what was consumed: the
 * usage the provider reported if it got that far; else, once text had arrived, the input counted
 * as an answer without usage figures counts it (its bound) and one output token per chunk of text
 * received (each chunk carries at least one generated token); nothing before any text arrived.
 */
import { chatInputTokenBound } from '../../operations/pricing.js';
import { ProviderError, ProviderInterrupted, type ProviderResult, type ProviderRun } from '../types.js';
import { isObject, type OpenAiCalls } from './calls.js';
import { chargedTokens, chatResult, readUsage, type ChatRequest, type ChatTokens } from './chat-request.js';
import { OPENAI_MAX_BYTES } from './limits.js';

/** What has arrived of a streamed answer so far. */
interface StreamState {
  content: string;
  /** Chunks that carried text. */
  textChunks: number;
  finishReason: string | undefined;
  usage: ChatTokens | undefined;
  model: unknown;
}

export async function runChatStream(calls: OpenAiCalls, job: ProviderRun, request: ChatRequest): Promise<ProviderResult> {
  const state: StreamState = { content: '', textChunks: 0, finishReason: undefined, usage: undefined, model: undefined };
  try {
    return await calls.guarded(
      job,
      () => readStream(calls, job, request, state),
      // A broken stream is charged only for the usage it reports, as a broken answer is.
      () => (state.usage ? job.charge(state.usage) : 0),
    );
  } catch (err) {
    if (job.signal.aborted) throw new ProviderInterrupted(interruptedCost(job, request, state));
    throw err;
  }
}

async function readStream(calls: OpenAiCalls, job: ProviderRun, request: ChatRequest, state: StreamState): Promise<ProviderResult> {
  const api = await calls.clientFor(job, OPENAI_MAX_BYTES.chat);
  const body = { ...request.body, stream: true, stream_options: { include_usage: true } };
  const stream = (await api.chat.completions.create(body as never, { signal: job.signal })) as unknown as AsyncIterable<unknown>;
  for await (const chunk of stream) readChunk(job, state, chunk);
  // The package ends the iteration quietly when the request is aborted.
  if (job.signal.aborted) throw job.signal.reason;
  if (state.finishReason === undefined) throw new ProviderError('PROVIDER_ERROR', 'The provider stream ended before the reply was complete.');
  const used = chargedTokens(request, state.usage);
  return chatResult(job, request, { content: state.content, finishReason: state.finishReason, used, model: state.model, cost: job.charge(used) });
}

/** One `chat.completion.chunk`: its text to onText, its finish reason, usage and model kept. */
function readChunk(job: ProviderRun, state: StreamState, chunk: unknown): void {
  if (!isObject(chunk)) throw new ProviderError('PROVIDER_ERROR', 'The provider stream sent an event that is not a chunk.');
  if (typeof chunk.model === 'string') state.model = chunk.model;
  state.usage = readUsage(chunk.usage) ?? state.usage;
  const choice = Array.isArray(chunk.choices) ? chunk.choices.find((c) => isObject(c) && (c.index ?? 0) === 0) : undefined;
  if (!isObject(choice)) return;
  const delta = choice.delta;
  if (delta !== undefined && delta !== null && !isObject(delta)) throw new ProviderError('PROVIDER_ERROR', 'The provider stream sent a chunk without a delta.');
  const text = isObject(delta) ? delta.content : undefined;
  if (text !== undefined && text !== null && typeof text !== 'string') throw new ProviderError('PROVIDER_ERROR', 'The provider stream sent a delta without text.');
  if (typeof text === 'string' && text.length > 0) {
    state.content += text;
    state.textChunks++;
    job.onText?.(text);
  }
  if (typeof choice.finish_reason === 'string') state.finishReason = choice.finish_reason;
}

/** What a stream stopped by its caller had consumed (see the header). */
function interruptedCost(job: ProviderRun, request: ChatRequest, state: StreamState): number {
  if (state.usage) return job.charge(state.usage);
  if (state.textChunks === 0) return 0;
  return job.charge({ inputTokens: chatInputTokenBound(request.messages), outputTokens: Math.min(request.maxTokens, state.textChunks) });
}
