/**
 * The `openai` provider type (decisions.md section 5): any OpenAI-compatible HTTP API (OpenAI,
 * Ollama, vLLM, LocalAI, LM Studio, OpenRouter …) through the official `openai` package.
 * chat.generate → POST /chat/completions, image.generate → POST /images/generations (or
 * /images/edits when the input has reference images), speech.generate → POST /audio/speech; and
 * for the ffmpeg engine's plan of a video.edit prompt, a chat route's answer constrained by a JSON
 * schema (structured output, openai/structured.ts).
 *
 * One module per endpoint (openai/chat.ts, images.ts, speech.ts) over what their calls share
 * (openai/calls.ts). Every call goes through the egress client (egress-fetch.ts): the SDK's retries are off, the
 * provider layer retries 429 and 5xx itself, each try has the provider's deadline and a size
 * bound per operation. Each operation runs as one step; the result has the operation's documented
 * shape plus `provider` (the provider's name in the file) and `model`.
 *
 * Only what the route's model accepts is sent (openai-models.ts, from the OpenAI API reference):
 * image sizes and `n` per model family, several requests where `n` is bounded, the images then
 * made exactly the size asked for; `max_completion_tokens` for reasoning chat models. What a model
 * cannot do at all is taken out of the route's input schema, so it is refused at admission.
 *
 * The key (the workspace's own or the operator's) lives only in the client built for one attempt;
 * it is never put in a result, state or error message (a provider's answer to a refused key is
 * replaced by a fixed message, and any error text is scrubbed of it). Without a key (a keyless
 * server such as Ollama) no Authorization header is sent.
 *
 * Costs: the provider's reported usage at the route's prices, capped at the maximum (job.charge).
 * A failure after the provider has done the work (an answer arrived but its file is unusable) is
 * charged for what the answer says was produced.
 */
import { imageRulesFor, openAiInputSchema } from './openai-models.js';
import { openAiCalls } from './openai/calls.js';
import { runChat } from './openai/chat.js';
import { runImages } from './openai/images.js';
import { runSpeech } from './openai/speech.js';
import { runStructuredChat } from './openai/structured.js';
import type { ProviderSpec } from './specs.js';
import { ProviderError, type AdapterContext, type Provider } from './types.js';

export { OPENAI_MAX_BYTES } from './openai/limits.js';
export { wavSeconds } from './openai/speech.js';

export function openAiProvider(spec: ProviderSpec, ctx: AdapterContext): Provider {
  const calls = openAiCalls(spec, ctx);
  return {
    name: 'openai',
    steps: () => 1,
    inputSchema: openAiInputSchema,
    imageSizes: (entry) => imageRulesFor(entry.model ?? '', entry).sizes,
    // A chat route's JSON answer constrained by a schema (openai/structured.ts): the ffmpeg engine's plan of a prompt.
    structuredChat: (job, request) => runStructuredChat(calls, job, request),
    async run(job) {
      switch (job.operation.id) {
        case 'chat.generate':
          return runChat(calls, job);
        case 'image.generate':
          return runImages(calls, job);
        case 'speech.generate':
          return runSpeech(calls, job);
        default:
          throw new ProviderError('OPERATION_UNAVAILABLE', `${job.operation.id} cannot run on an openai provider.`);
      }
    },
  };
}
