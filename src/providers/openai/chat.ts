/**
 * chat.generate on an `openai` provider: POST /chat/completions, priced by the tokens it reports.
 * A caller that takes the reply as it is generated (ProviderRun.onText) gets the streamed call of
 * chat-stream.ts instead, with the same request, result and cost.
 */
import { ProviderError, type ProviderResult, type ProviderRun } from '../types.js';
import { isObject, type OpenAiCalls } from './calls.js';
import { chargedTokens, chatRequest, chatResult, readUsage } from './chat-request.js';
import { runChatStream } from './chat-stream.js';
import { OPENAI_MAX_BYTES } from './limits.js';

export async function runChat(calls: OpenAiCalls, job: ProviderRun): Promise<ProviderResult> {
  const request = chatRequest(job);
  if (job.onText) return runChatStream(calls, job, request);
  const api = await calls.clientFor(job, OPENAI_MAX_BYTES.chat);
  let consumed = 0;
  return calls.guarded(
    job,
    async () => {
      const answer = (await api.chat.completions.create(request.body as never, { signal: job.signal })) as unknown;
      const body = isObject(answer) ? answer : {};
      const usage = readUsage(body.usage);
      // Without usage figures the bound is charged: never less than the provider may have used.
      const used = chargedTokens(request, usage);
      const cost = job.charge(used);
      // A broken answer is charged only for the usage it reports.
      consumed = usage ? cost : 0;
      const choice = Array.isArray(body.choices) ? body.choices[0] : undefined;
      const message = isObject(choice) ? choice.message : undefined;
      if (!isObject(choice) || !isObject(message)) throw new ProviderError('PROVIDER_ERROR', 'The provider answer has no message.');
      const content = typeof message.content === 'string' ? message.content : message.content == null ? '' : undefined;
      if (content === undefined) throw new ProviderError('PROVIDER_ERROR', 'The provider answer has a message without text.');
      return chatResult(job, request, { content, finishReason: choice.finish_reason, used, model: body.model, cost });
    },
    () => consumed,
  );
}
