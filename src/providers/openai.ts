/**
 * The `openai` provider type (decisions.md section 5): any OpenAI-compatible HTTP API (OpenAI,
 * Ollama, vLLM, LocalAI, LM Studio, OpenRouter …) through the official `openai` package.
 * chat.generate → POST /chat/completions, image.generate → POST /images/generations (or
 * /images/edits when the input has reference images), speech.generate → POST /audio/speech.
 *
 * Every call goes through the egress client (egress-fetch.ts): the SDK's retries are off, the
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
import type OpenAI from 'openai';
import { egressFetch } from './egress-fetch.js';
import { AnswerTooLarge, errorCodeForStatus, type RetryPolicy } from './http.js';
import { characterCount, chatInputTokenBound } from '../operations/pricing.js';
import { checkProviderFile, coverResize, downloadProviderFile } from './provider-files.js';
import type { ProviderSpec } from './specs.js';
import { imageRulesFor, isReasoningChatModel, openAiInputSchema, planImages, sizeText } from './openai-models.js';
import type { AdapterContext } from './types.js';
import { ProviderError, type ProducedFile, type Provider, type ProviderResult, type ProviderRun } from './types.js';

const MiB = 1024 * 1024;
/** Largest answer accepted per operation (base64 images and audio included). */
export const OPENAI_MAX_BYTES = { chat: 4 * MiB, images: 128 * MiB, speech: 64 * MiB } as const;
/** Backoff between two tries of a call (Retry-After is honoured up to maxDelayMs). */
const BASE_DELAY_MS = 250;
const MAX_DELAY_MS = 30_000;
/** The SDK needs a key string; a keyless server gets this one, and no Authorization header is sent. */
const NO_KEY = 'unused';

interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

type OpenAiPackage = typeof import('openai');
let openAiPackage: OpenAiPackage | undefined;

/**
 * The `openai` package, loaded on the first call of a provider of this type: a service without
 * one never loads it. Its error classes are looked up through it (an error of the package can only
 * exist once it is loaded).
 */
async function loadOpenAi(): Promise<OpenAiPackage> {
  return (openAiPackage ??= await import('openai'));
}

export function openAiProvider(spec: ProviderSpec, ctx: AdapterContext): Provider {
  if (!spec.baseUrl) throw new Error(`providers file: openai provider ${spec.name} has no baseUrl`);
  const baseUrl = spec.baseUrl;
  const policy: RetryPolicy = { maxRetries: spec.maxRetries, baseDelayMs: BASE_DELAY_MS, maxDelayMs: MAX_DELAY_MS };
  // The SDK's own deadline only backs up ours: every try has the provider's deadline, so a call
  // with its retries and pauses ends within this bound anyway.
  const callDeadlineMs = spec.requestTimeoutMs * (spec.maxRetries + 1) + MAX_DELAY_MS * spec.maxRetries + 1000;

  /** A client for one attempt, with the attempt's key and the operation's size bound. */
  function client(sdk: OpenAiPackage, apiKey: string | undefined, maxBytes: number): OpenAI {
    const key = apiKey && apiKey.length > 0 ? apiKey : undefined;
    return new sdk.OpenAI({
      apiKey: key ?? NO_KEY,
      // Explicit values, so nothing is read from the environment (OPENAI_ORG_ID, OPENAI_LOG …).
      adminAPIKey: null,
      organization: null,
      project: null,
      webhookSecret: null,
      baseURL: baseUrl,
      maxRetries: 0,
      timeout: callDeadlineMs,
      logLevel: 'off',
      fetch: egressFetch(ctx.providerEgress, { timeoutMs: spec.requestTimeoutMs, maxBytes, policy, sendAuthorization: key !== undefined }),
    });
  }

  /**
   * The client of an attempt. Jobs funded by credits use the operator's key, which the service
   * holds anyway: their clients are built once per size bound and reused. A workspace's own key
   * lives only in a client built for its attempt.
   */
  const operatorClients = new Map<number, OpenAI>();
  async function clientFor(job: ProviderRun, maxBytes: number): Promise<OpenAI> {
    const sdk = await loadOpenAi();
    if (job.funding !== 'credits' || job.apiKey !== spec.apiKey?.reveal()) return client(sdk, job.apiKey, maxBytes);
    let api = operatorClients.get(maxBytes);
    if (!api) operatorClients.set(maxBytes, (api = client(sdk, job.apiKey, maxBytes)));
    return api;
  }

  /** A ProviderError for any failure of a call; the caller's abort is rethrown as is. */
  function failure(err: unknown, job: ProviderRun, consumedMillicents = 0): unknown {
    if (job.signal.aborted) return job.signal.reason ?? err;
    let mapped: ProviderError | undefined;
    const sdk = openAiPackage;
    if (err instanceof ProviderError) mapped = err;
    else if (sdk && err instanceof sdk.APIConnectionError && err.cause instanceof ProviderError) mapped = err.cause;
    else if (sdk && err instanceof sdk.APIConnectionTimeoutError) mapped = new ProviderError('PROVIDER_TIMEOUT', 'The provider did not answer in time.');
    else if (sdk && err instanceof sdk.APIUserAbortError) mapped = new ProviderError('PROVIDER_TIMEOUT', 'The provider call was aborted.');
    else if (sdk && err instanceof sdk.APIConnectionError) mapped = new ProviderError('PROVIDER_ERROR', 'The provider could not be reached.');
    else if (sdk && err instanceof sdk.APIError && typeof err.status === 'number') mapped = new ProviderError(errorCodeForStatus(err.status), `the provider answered HTTP ${err.status}`);
    else if (err instanceof SyntaxError) mapped = new ProviderError('PROVIDER_ERROR', 'The provider answer is not valid JSON.');
    if (!mapped) return err;
    let message = mapped.message;
    // A refusal of the key may quote it (even masked): the message is ours, never the provider's.
    if (mapped.code === 'PROVIDER_AUTH') message = 'The provider refused the API key.';
    if (job.apiKey) message = message.split(job.apiKey).join('[redacted]');
    const consumed = Math.max(mapped.consumedMillicents, consumedMillicents);
    return message === mapped.message && consumed === mapped.consumedMillicents ? mapped : new ProviderError(mapped.code, message, consumed);
  }

  /** Runs `work`, mapping every failure; `consumed()` is what the provider did before it failed. */
  async function guarded<T>(job: ProviderRun, work: () => Promise<T>, consumed: () => number = () => 0): Promise<T> {
    try {
      return await work();
    } catch (err) {
      throw failure(err, job, consumed());
    }
  }

  async function chat(job: ProviderRun): Promise<ProviderResult> {
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

  async function images(job: ProviderRun): Promise<ProviderResult> {
    const count = typeof job.input.count === 'number' ? job.input.count : 1;
    const width = typeof job.input.width === 'number' ? job.input.width : 1024;
    const height = typeof job.input.height === 'number' ? job.input.height : 1024;
    const prompt = String(job.input.prompt ?? '');
    const references = Array.isArray(job.input.referenceMediaIds) ? (job.input.referenceMediaIds as string[]) : [];
    const model = job.route.model!;
    const api = await clientFor(job, OPENAI_MAX_BYTES.images);
    // Only sizes and counts the model accepts are sent (openai-models.ts): the nearest accepted
    // size, in as many requests as its `n` bound needs; the images are then made the size asked.
    const rules = imageRulesFor(model, job.route.spec);
    const plan = planImages(rules, { width, height }, count);
    const resize = plan.generated.width !== width || plan.generated.height !== height;
    // GPT image models always answer base64 and refuse the parameter; others are asked for base64
    // (one answer, no second download), and a URL answer is downloaded all the same.
    const format = rules.responseFormat ? { response_format: 'b64_json' as const } : {};
    const size = sizeText(plan.generated);
    let returned = 0;
    return guarded(
      job,
      async () => {
        const uploads =
          references.length === 0
            ? []
            : await Promise.all(
                references.map(async (id, i) => {
                  const item = await job.media.read(id);
                  return (await loadOpenAi()).toFile(item.bytes, `reference-${i + 1}.${extensionOf(item.mimeType)}`, { type: item.mimeType });
                }),
              );
        const files: ProducedFile[] = [];
        let named: unknown;
        for (const n of plan.batches) {
          const answer: unknown =
            uploads.length > 0
              ? await api.images.edit({ model, prompt, image: uploads.length === 1 ? uploads[0]! : uploads, n, size: size as '1024x1024', ...format }, { signal: job.signal })
              : await api.images.generate({ model, prompt, n, size: size as '1024x1024', ...format }, { signal: job.signal });
          const items = isObject(answer) && Array.isArray(answer.data) ? answer.data : [];
          if (items.length > n) {
            // The provider made (and bills) what it was asked for; nothing it answered is kept.
            returned += n;
            throw new ProviderError('PROVIDER_ERROR', `The provider returned ${items.length} images where ${n} were asked for.`);
          }
          returned += items.length;
          named ??= isObject(answer) ? answer.model : undefined;
          // One image at a time: checked like an upload, then made the size asked for (the
          // generated bytes are dropped once resized, so at most one answer's worth is held).
          for (const item of items) {
            const i = files.length;
            const file = await checkProviderFile(await imageBytes(job, item), 'image', 'images', `image-${i + 1}`, i);
            files.push(resize ? await checkProviderFile(await coverResize(file.bytes, width, height), 'image', 'images', `image-${i + 1}`, i) : file);
          }
        }
        if (returned === 0) throw new ProviderError('PROVIDER_ERROR', 'The provider returned no image.');
        return {
          data: {
            provider: job.route.providerName,
            model: answerModel(named, model),
            imageSize: { requested: sizeText(plan.requested), generated: size, resize: resize ? 'cover' : 'none', requests: plan.batches.length },
          },
          files,
          costMillicents: job.charge({ images: returned }),
        };
      },
      () => (returned > 0 ? job.charge({ images: returned }) : 0),
    );
  }

  /** The bytes of one image of an answer: base64 in the answer, or downloaded from its URL. */
  async function imageBytes(job: ProviderRun, item: unknown): Promise<Buffer> {
    if (isObject(item) && typeof item.b64_json === 'string' && item.b64_json.length > 0) return Buffer.from(item.b64_json, 'base64');
    if (isObject(item) && typeof item.url === 'string' && item.url.length > 0) {
      if (item.url.startsWith('data:')) {
        const m = /^data:[^,]*;base64,(.*)$/s.exec(item.url);
        if (!m) throw new ProviderError('PROVIDER_ERROR', 'The provider returned an image data URI that is not base64.');
        return Buffer.from(m[1]!, 'base64');
      }
      return downloadProviderFile(ctx, baseUrl, item.url, {
        ...(job.apiKey ? { headers: { authorization: `Bearer ${job.apiKey}` } } : {}),
        signal: job.signal,
        timeoutMs: spec.requestTimeoutMs,
        policy,
      });
    }
    throw new ProviderError('PROVIDER_ERROR', 'The provider answer has an image without data or URL.');
  }

  async function speech(job: ProviderRun): Promise<ProviderResult> {
    const text = String(job.input.text ?? '');
    const format = job.input.format === 'wav' ? 'wav' : 'mp3';
    const voice = typeof job.input.voice === 'string' ? job.input.voice : (job.route.spec?.voice ?? 'alloy');
    const model = job.route.model!;
    const characters = characterCount(text);
    const api = await clientFor(job, OPENAI_MAX_BYTES.speech);
    let answered = false;
    return guarded(
      job,
      async () => {
        let res: Response;
        try {
          res = await api.audio.speech.create({ model, input: text, voice, response_format: format }, { signal: job.signal });
        } catch (err) {
          // Audio over the bound is an unusable answer to work the provider did: its characters are charged.
          if (err instanceof AnswerTooLarge || (openAiPackage !== undefined && err instanceof openAiPackage.APIConnectionError && err.cause instanceof AnswerTooLarge)) answered = true;
          throw err;
        }
        const bytes = Buffer.from(await res.arrayBuffer());
        answered = true;
        const file = await checkProviderFile(bytes, 'audio', 'audio', 'speech');
        const durationSeconds = file.mimeType === 'audio/wav' ? wavSeconds(bytes) : undefined;
        return {
          data: {
            provider: job.route.providerName,
            model,
            format: file.mimeType === 'audio/wav' ? 'wav' : file.mimeType === 'audio/mpeg' ? 'mp3' : file.name.split('.').pop(),
            characters,
            ...(durationSeconds !== undefined ? { durationSeconds } : {}),
          },
          files: [file],
          costMillicents: job.charge({ characters }),
        };
      },
      () => (answered ? job.charge({ characters }) : 0),
    );
  }

  return {
    name: 'openai',
    steps: () => 1,
    inputSchema: openAiInputSchema,
    async run(job) {
      switch (job.operation.id) {
        case 'chat.generate':
          return chat(job);
        case 'image.generate':
          return images(job);
        case 'speech.generate':
          return speech(job);
        default:
          throw new ProviderError('OPERATION_UNAVAILABLE', `${job.operation.id} cannot run on an openai provider.`);
      }
    },
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/** Token usage of a chat answer, when it reports both figures. */
function readUsage(usage: unknown): { inputTokens: number; outputTokens: number } | undefined {
  if (!isObject(usage)) return undefined;
  const inputTokens = count(usage.prompt_tokens);
  const outputTokens = count(usage.completion_tokens);
  return inputTokens !== undefined && outputTokens !== undefined ? { inputTokens, outputTokens } : undefined;
}

/** The model the answer names (providers resolve aliases), else the route's. */
function answerModel(named: unknown, routeModel: string): string {
  return typeof named === 'string' && named.length > 0 && named.length <= 200 ? named : routeModel;
}

function extensionOf(mimeType: string): string {
  const sub = mimeType.split('/')[1]?.split(';')[0]?.trim() ?? '';
  return sub === 'jpeg' ? 'jpg' : /^[a-z0-9]{1,8}$/.test(sub) ? sub : 'bin';
}

/** Seconds of a PCM WAV from its fmt and data chunks; undefined when the header does not say. */
export function wavSeconds(bytes: Buffer): number | undefined {
  if (bytes.length < 12 || bytes.toString('latin1', 0, 4) !== 'RIFF' || bytes.toString('latin1', 8, 12) !== 'WAVE') return undefined;
  let byteRate: number | undefined;
  for (let o = 12; o + 8 <= bytes.length; ) {
    const id = bytes.toString('latin1', o, o + 4);
    const size = bytes.readUInt32LE(o + 4);
    if (id === 'fmt ' && o + 20 <= bytes.length) byteRate = bytes.readUInt32LE(o + 16);
    if (id === 'data') {
      if (!byteRate) return undefined;
      const dataBytes = Math.min(size, bytes.length - o - 8);
      return Math.round((dataBytes / byteRate) * 1000) / 1000;
    }
    o += 8 + size + (size % 2);
  }
  return undefined;
}

