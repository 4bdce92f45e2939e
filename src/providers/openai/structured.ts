/**
 * A chat completion whose answer is JSON constrained by a schema, on an `openai` provider
 * (Provider.structuredChat): POST /chat/completions with OpenAI's structured output,
 * `response_format: {type: "json_schema", json_schema: {name, strict: true, schema}}`. The
 * ffmpeg engine asks it for the edit steps of a video.edit prompt (local/video-prompt.ts).
 *
 * Strict mode takes a subset of JSON Schema ("Structured Outputs", Supported schemas,
 * https://platform.openai.com/docs/guides/structured-outputs): the root is an object; every
 * object lists all its properties in `required` and has `additionalProperties: false` (an
 * optional property is sent as required and nullable); unions are `anyOf`. `strictSchema`
 * renders a schema so (`oneOf` → `anyOf`, `const` → a one-value `enum`, no `default`), and
 * `withoutNulls` undoes the nullable rendering of an answer before it is validated against the
 * original schema, by the caller: the model's answer is never trusted to follow the schema.
 *
 * Cost: the reported usage at the route's prices (`job.charge`); without usage figures, the
 * bounds: the answer's max tokens, and for the input the messages' bound (pricing.ts) plus the
 * bytes of the response format (the provider feeds the schema to the model as input) and one
 * message's framing allowance.
 */
import { CHAT_TOKENS_PER_MESSAGE, chatInputTokenBound } from '../../operations/pricing.js';
import { isReasoningChatModel } from '../openai-models.js';
import { ProviderError, type ProviderRun, type StructuredChatAnswer, type StructuredChatRequest } from '../types.js';
import { isObject, type OpenAiCalls } from './calls.js';
import { readUsage } from './chat-request.js';
import { OPENAI_MAX_BYTES } from './limits.js';

type Schema = Record<string, unknown>;

/** The `response_format` of a request. */
export function structuredResponseFormat(request: Pick<StructuredChatRequest, 'name' | 'schema'>): Record<string, unknown> {
  return { type: 'json_schema', json_schema: { name: request.name, strict: true, schema: strictSchema(request.schema) } };
}

/** The most input tokens a structured request can be charged for (see the header). */
export function structuredInputTokenBound(request: Pick<StructuredChatRequest, 'messages' | 'name' | 'schema'>): number {
  return chatInputTokenBound(request.messages) + Buffer.byteLength(JSON.stringify(structuredResponseFormat(request)), 'utf8') + CHAT_TOKENS_PER_MESSAGE;
}

/** `schema` in the subset strict mode takes (see the header). */
export function strictSchema(schema: unknown, nullable = false): unknown {
  if (Array.isArray(schema)) return schema.map((s) => strictSchema(s));
  if (!isObject(schema)) return schema;
  const out: Schema = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'default') continue;
    if (key === 'const') out.enum = [value];
    else if (key === 'oneOf' || key === 'anyOf') out.anyOf = (value as unknown[]).map((s) => strictSchema(s));
    else if (key === 'items') out.items = strictSchema(value);
    else if (key === 'properties' && isObject(value)) {
      const required = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
      out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, strictSchema(s, !required.has(name))]));
      out.required = Object.keys(value);
      out.additionalProperties = false;
    } else if (key !== 'required' && key !== 'additionalProperties') out[key] = value;
  }
  if (out.enum !== undefined && out.type === undefined) out.type = typeof (out.enum as unknown[])[0] === 'number' ? 'number' : 'string';
  if (nullable) {
    if (out.type !== undefined) out.type = [...(Array.isArray(out.type) ? out.type : [out.type]), 'null'];
    if (Array.isArray(out.enum)) out.enum = [...out.enum, null];
  }
  return out;
}

/** The answer with every null-valued property removed (an optional property the model left empty). */
export function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNulls);
  if (!isObject(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null).map(([k, v]) => [k, withoutNulls(v)]));
}

export async function runStructuredChat(calls: OpenAiCalls, job: ProviderRun, request: StructuredChatRequest): Promise<StructuredChatAnswer> {
  const model = job.route.model!;
  const body = {
    model,
    messages: request.messages,
    // As in chat.ts: reasoning models take max_completion_tokens instead of max_tokens.
    ...(isReasoningChatModel(model) ? { max_completion_tokens: request.maxTokens } : { max_tokens: request.maxTokens }),
    response_format: structuredResponseFormat(request),
  };
  const api = await calls.clientFor(job, OPENAI_MAX_BYTES.chat);
  let consumed = 0;
  return calls.guarded(
    job,
    async () => {
      const answer = (await api.chat.completions.create(body as never, { signal: job.signal })) as unknown;
      const reply = isObject(answer) ? answer : {};
      const usage = readUsage(reply.usage);
      // Without usage figures the bounds are charged: never less than the provider may have used.
      const used = usage ?? { inputTokens: structuredInputTokenBound(request), outputTokens: request.maxTokens };
      const cost = job.charge(used);
      consumed = usage ? cost : 0;
      const choice = Array.isArray(reply.choices) ? reply.choices[0] : undefined;
      const message = isObject(choice) ? choice.message : undefined;
      if (!isObject(choice) || !isObject(message)) throw new ProviderError('PROVIDER_ERROR', 'The provider answer has no message.');
      const refused = typeof message.refusal === 'string' && message.refusal.length > 0;
      let value: unknown;
      if (!refused && typeof message.content === 'string') {
        try {
          value = JSON.parse(message.content);
        } catch {
          value = undefined;
        }
      }
      return {
        value,
        refused,
        finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : null,
        inputTokens: used.inputTokens,
        outputTokens: used.outputTokens,
        costMillicents: cost,
      };
    },
    () => consumed,
  );
}
