/**
 * What a chat.generate call on an `openai` provider sends and how its answer becomes the result
 * and the charge: shared by the plain call (chat.ts) and the streamed one (chat-stream.ts).
 */
import { chatInputTokenBound } from '../../operations/pricing.js';
import { isReasoningChatModel } from '../openai-models.js';
import type { ProviderResult, ProviderRun } from '../types.js';
import { answerModel, isObject } from './calls.js';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ChatTokens {
  inputTokens: number;
  outputTokens: number;
}

/** What a chat call sends, and the bounds its cost follows from. */
export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  maxTokens: number;
  /** The body of POST /chat/completions (without the stream fields). */
  body: Record<string, unknown>;
}

export function chatRequest(job: ProviderRun): ChatRequest {
  const messages = (Array.isArray(job.input.messages) ? job.input.messages : []) as ChatMessage[];
  const maxTokens = typeof job.input.maxTokens === 'number' ? job.input.maxTokens : 512;
  const temperature = typeof job.input.temperature === 'number' ? job.input.temperature : undefined;
  const model = job.route.model!;
  const reasoning = isReasoningChatModel(model);
  const body = {
    model,
    messages: messages.map((m) => ({ role: m.role, content: m.content })),
    // The bound that makes the maximum cost true: max_tokens, understood by every compatible
    // server; reasoning models refuse it and take max_completion_tokens (openai-models.ts).
    ...(reasoning ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens }),
    // Reasoning models take only the default temperature (their input schema has none).
    ...(temperature !== undefined && !reasoning ? { temperature } : {}),
  };
  return { model, messages, maxTokens, body };
}

/** The tokens a call is charged for: the reported usage, or without figures the bound (never less than the provider may have used). */
export function chargedTokens(request: ChatRequest, usage: ChatTokens | undefined): ChatTokens {
  return usage ?? { inputTokens: chatInputTokenBound(request.messages), outputTokens: request.maxTokens };
}

/** The result of a chat call, the same whether it was streamed or not. */
export function chatResult(job: ProviderRun, request: ChatRequest, answer: { content: string; finishReason: unknown; used: ChatTokens; model: unknown; cost: number }): ProviderResult {
  return {
    data: {
      message: { role: 'assistant', content: answer.content },
      finishReason: typeof answer.finishReason === 'string' ? answer.finishReason : 'stop',
      usage: answer.used,
      provider: job.route.providerName,
      model: answerModel(answer.model, request.model),
    },
    files: [],
    costMillicents: answer.cost,
  };
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** Token usage of a chat answer or stream chunk, when it reports both figures. */
export function readUsage(usage: unknown): ChatTokens | undefined {
  if (!isObject(usage)) return undefined;
  const inputTokens = count(usage.prompt_tokens);
  const outputTokens = count(usage.completion_tokens);
  return inputTokens !== undefined && outputTokens !== undefined ? { inputTokens, outputTokens } : undefined;
}
