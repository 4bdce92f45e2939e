/** chat.generate on an `openai` provider: POST /chat/completions, priced by the tokens it reports. */
import { chatInputTokenBound } from '../../operations/pricing.js';
import { isReasoningChatModel } from '../openai-models.js';
import { ProviderError, type ProviderResult, type ProviderRun } from '../types.js';
import { answerModel, isObject, type OpenAiCalls } from './calls.js';
import { OPENAI_MAX_BYTES } from './limits.js';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export async function runChat({ clientFor, guarded }: OpenAiCalls, job: ProviderRun): Promise<ProviderResult> {
  const messages = (Array.isArray(job.input.messages) ? job.input.messages : []) as ChatMessage[];
  const maxTokens = typeof job.input.maxTokens === 'number' ? job.input.maxTokens : 512;
  const temperature = typeof job.input.temperature === 'number' ? job.input.temperature : undefined;
  const model = job.route.model!;
  const reasoning = isReasoningChatModel(model);
  const api = await clientFor(job, OPENAI_MAX_BYTES.chat);
  let consumed = 0;
  return guarded(
    job,
    async () => {
      const answer = (await api.chat.completions.create(
        {
          model,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          // The bound that makes the maximum cost true: max_tokens, understood by every compatible
          // server; reasoning models refuse it and take max_completion_tokens (openai-models.ts).
          ...(reasoning ? { max_completion_tokens: maxTokens } : { max_tokens: maxTokens }),
          // Reasoning models take only the default temperature (their input schema has none).
          ...(temperature !== undefined && !reasoning ? { temperature } : {}),
        },
        { signal: job.signal },
      )) as unknown;
      const body = isObject(answer) ? answer : {};
      const usage = readUsage(body.usage);
      // Without usage figures the bound is charged: never less than the provider may have used.
      const used = usage ?? { inputTokens: chatInputTokenBound(messages), outputTokens: maxTokens };
      const cost = job.charge(used);
      // A broken answer is charged only for the usage it reports.
      consumed = usage ? cost : 0;
      const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
      const message = isObject(choice) ? choice.message : undefined;
      if (!isObject(choice) || !isObject(message)) throw new ProviderError('PROVIDER_ERROR', 'The provider answer has no message.');
      const content = typeof message.content === 'string' ? message.content : message.content == null ? '' : undefined;
      if (content === undefined) throw new ProviderError('PROVIDER_ERROR', 'The provider answer has a message without text.');
      return {
        data: {
          message: { role: 'assistant', content },
          finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop',
          usage: used,
          provider: job.route.providerName,
          model: answerModel(body.model, model),
        },
        files: [],
        costMillicents: cost,
      };
    },
    () => consumed,
  );
}


const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** Token usage of a chat answer, when it reports both figures. */
function readUsage(usage: unknown): { inputTokens: number; outputTokens: number } | undefined {
  if (!isObject(usage)) return undefined;
  const inputTokens = count(usage.prompt_tokens);
  const outputTokens = count(usage.completion_tokens);
  return inputTokens !== undefined && outputTokens !== undefined ? { inputTokens, outputTokens } : undefined;
}
