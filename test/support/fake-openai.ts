/**
 * A local OpenAI-compatible server for the openai adapter's tests: node:http on 127.0.0.1, the
 * real wire format of POST /v1/chat/completions, /v1/images/generations, /v1/images/edits and
 * /v1/audio/speech, and GET /files/<name> for images answered by URL. It records every request
 * (method, path, headers, parsed JSON or multipart body) and can be scripted per path with a queue
 * of answers (status, headers such as retry-after, JSON or raw bytes, a delay before answering,
 * an answer held until the test lets it go, or a body streamed until the client stops reading).
 * Nothing of the `openai` package is mocked: the adapter talks HTTP to this server.
 *
 * Chat completions with `stream: true` answer as OpenAI's stream does (fake-openai-stream.ts);
 * a `response_format` (structured output) is held to the API's rules (fake-openai-structured.ts)
 * and answered with `chatReply` as the message's content, as any chat is.
 *
 * Strict where OpenAI is (issue 39): requests the real API refuses are refused here with its error
 * shape, HTTP 400 `{error: {message, type: "invalid_request_error", param, code}}` ("Error codes",
 * https://platform.openai.com/docs/guides/error-codes). Each rule names the page of the public API
 * reference it follows. Models outside the families below (an OpenAI-compatible server such as
 * Ollama or LocalAI) are answered leniently, as such servers do.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePng, makeWav } from '../../src/providers/sim-files.js';
import { mp3 } from './media.js';
import { writeStreamedBody, type StreamedBody } from './streamed-body.js';
import { streamParamsRefusal, writeChatStream, type ChatAnswer, type ChatStreamOptions, type ChatStreamRecord } from './fake-openai-stream.js';
import { responseFormatRefusal } from './fake-openai-structured.js';

/**
 * Image model families of the OpenAI API reference, "Create image"
 * (https://platform.openai.com/docs/api-reference/images/create): `size` must be one of the
 * family's sizes (GPT image models also take "auto", answered at 1024x1024); `n` 1 to 10, only 1
 * for dall-e-3; `response_format` url or b64_json for dall-e (url by default), refused for GPT
 * image models, which always answer b64_json and report token `usage`. "Create image edit"
 * (https://platform.openai.com/docs/api-reference/images/createEdit): dall-e-2 (one square PNG)
 * and GPT image models (up to 16 images) only.
 * Written from the reference, independently of src/providers/openai-models.ts.
 */
const IMAGE_FAMILIES = [
  { match: /^dall-e-2$/, family: 'dall-e-2', sizes: ['256x256', '512x512', '1024x1024'], maxN: 10, responseFormat: true, edits: 1 },
  { match: /^dall-e-3$/, family: 'dall-e-3', sizes: ['1024x1024', '1792x1024', '1024x1792'], maxN: 1, responseFormat: true, edits: 0 },
  { match: /^gpt-image/, family: 'gpt-image', sizes: ['1024x1024', '1536x1024', '1024x1536', 'auto'], maxN: 10, responseFormat: false, edits: 16 },
] as const;

/**
 * Reasoning chat models, "Create chat completion"
 * (https://platform.openai.com/docs/api-reference/chat/create): `max_tokens` "is not compatible
 * with o-series models" (the API answers `unsupported_parameter`, "Use 'max_completion_tokens'
 * instead"); gpt-5 models refuse it the same way; and they take only the default temperature (1).
 */
const REASONING_CHAT = /^(o[1-9]([-.].*)?|gpt-5.*)$/;

/** The API's refusal of a request ("Error codes", https://platform.openai.com/docs/guides/error-codes). */
export class OpenAiRefusal extends Error {
  constructor(
    message: string,
    readonly param: string | null,
    readonly code: string | null,
    readonly status = 400,
    readonly type = 'invalid_request_error',
  ) {
    super(message);
  }
  get body() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export interface RecordedFile {
  field: string;
  name: string;
  type: string;
  sha256: string;
  size: number;
}

export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The parsed JSON body, when the request had one. */
  json?: any;
  /** Multipart fields (strings) and files, when the request was multipart/form-data. */
  form?: { fields: Record<string, string>; files: RecordedFile[] };
  raw: Buffer;
}

/** A scripted answer. Without `json` or `bytes`, a 2xx answer is the default one for the path (after `delayMs`). */
export interface Scripted {
  status?: number;
  headers?: Record<string, string>;
  json?: unknown;
  bytes?: Buffer;
  contentType?: string;
  /** Wait this long before answering (a deadline test). */
  delayMs?: number;
  /**
   * Hold the answer until this settles (after `delayMs`): a request in flight for as long as a
   * test needs, e.g. while it cancels the job or its worker dies. An answer to a client that has
   * gone by then is not written.
   */
  until?: Promise<unknown>;
  /**
   * A 200 body of `bytes` zero bytes written in 64 KiB chunks until done or the client closes the
   * connection (`streamedBytes` counts what was written); `declareLength` sends its Content-Length
   * first, else it is chunked.
   */
  stream?: StreamedBody;
}

export type FakePath = '/v1/chat/completions' | '/v1/images/generations' | '/v1/images/edits' | '/v1/audio/speech';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export class FakeOpenAi {
  readonly requests: RecordedRequest[] = [];
  /** How streamed chat answers are sent (fake-openai-stream.ts), and how far each got, in order. */
  chatStream: ChatStreamOptions = { pieces: undefined, hold: undefined, delayMs: 0 };
  readonly chatStreams: ChatStreamRecord[] = [];
  /** Usage of the default chat answer; null leaves it out. */
  chatUsage: ChatUsage | null = { prompt_tokens: 17, completion_tokens: 9 };
  /** The default chat reply's text. */
  chatReply = 'Hello from the fake.';
  /** How default image answers carry the images: as the request's response_format asks (base64 when it names none), or always one way. */
  imageMode: 'request' | 'b64' | 'url' = 'request';
  /** Bytes of the images last answered by default, in order. */
  lastImages: Buffer[] = [];
  /** Bytes of the last default speech answer. */
  lastSpeech: Buffer | undefined;
  /** Bytes written of the last streamed answer before it ended or the client closed the connection. */
  streamedBytes = 0;
  /** Refusals answered (strict rules), in order. */
  readonly refusals: { path: string; status: number; body: unknown }[] = [];
  private readonly scripts = new Map<string, Scripted[]>();
  private readonly files = new Map<string, Buffer>();
  private readonly streamedFiles = new Map<string, StreamedBody>();
  private readonly server: Server;
  private readonly open = new Set<ServerResponse>();
  private imageSeed = 1;

  private constructor() {
    this.server = createServer((req, res) => {
      this.open.add(res);
      res.on('close', () => this.open.delete(res));
      this.handle(req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: String(err) } }));
      });
    });
  }

  static async start(): Promise<FakeOpenAi> {
    const fake = new FakeOpenAi();
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  /** The base URL a providers file names (`…/v1`). */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** Queues answers for a path, used in order before the default answer. */
  script(path: FakePath, ...answers: Scripted[]): void {
    this.scripts.set(path, [...(this.scripts.get(path) ?? []), ...answers]);
  }

  /** Serves a streamed body (test/support/streamed-body.ts) at GET /files/<name>; returns its URL. */
  streamFile(name: string, body: StreamedBody): string {
    this.streamedFiles.set(name, body);
    return `${this.origin}/files/${name}`;
  }

  /** Requests to `path` (all when omitted). */
  seen(path?: string): RecordedRequest[] {
    return path ? this.requests.filter((r) => r.path === path) : [...this.requests];
  }

  /** Forgets requests, scripts and settings between tests. */
  reset(): void {
    this.requests.length = 0;
    this.scripts.clear();
    this.files.clear();
    this.streamedFiles.clear();
    this.chatUsage = { prompt_tokens: 17, completion_tokens: 9 };
    this.chatReply = 'Hello from the fake.';
    this.imageMode = 'request';
    this.lastImages = [];
    this.lastSpeech = undefined;
    this.streamedBytes = 0;
    this.refusals.length = 0;
    this.chatStream = { pieces: undefined, hold: undefined, delayMs: 0 };
    this.chatStreams.length = 0;
  }

  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const path = new URL(req.url ?? '/', this.origin).pathname;
    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, headers: { ...req.headers }, raw };
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('application/json') && raw.length > 0) recorded.json = JSON.parse(raw.toString('utf8'));
    if (type.startsWith('multipart/form-data')) recorded.form = await parseMultipart(raw, type);
    this.requests.push(recorded);

    if (req.method === 'GET' && path.startsWith('/files/')) {
      const streamed = this.streamedFiles.get(path.slice('/files/'.length));
      if (streamed) return this.stream(res, { contentType: 'image/png', ...streamed });
      const file = this.files.get(path.slice('/files/'.length));
      if (!file) return send(res, 404, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: 'no such file' } }));
      return send(res, 200, { 'content-type': 'image/png' }, file);
    }

    const scripted = this.scripts.get(path)?.shift();
    if (scripted?.delayMs) {
      await new Promise((resolve) => setTimeout(resolve, scripted.delayMs).unref());
      if (res.destroyed) return;
    }
    if (scripted?.until) {
      await scripted.until.catch(() => undefined);
      if (res.destroyed) return;
    }
    if (scripted?.stream) return this.stream(res, scripted.stream);
    if (scripted && (scripted.json !== undefined || scripted.bytes !== undefined || (scripted.status ?? 200) >= 300)) {
      const status = scripted.status ?? 200;
      const headers: Record<string, string> = { ...scripted.headers };
      if (scripted.bytes !== undefined) {
        headers['content-type'] ??= scripted.contentType ?? 'application/octet-stream';
        return send(res, status, headers, scripted.bytes);
      }
      headers['content-type'] ??= 'application/json';
      const body = scripted.json ?? { error: { message: `scripted ${status}`, type: status >= 500 ? 'server_error' : 'invalid_request_error', param: null, code: null } };
      return send(res, status, headers, JSON.stringify(body));
    }

    if (req.method !== 'POST') return send(res, 405, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: 'method not allowed' } }));
    try {
      switch (path) {
        case '/v1/chat/completions': {
          const answer = this.chatAnswer(recorded.json);
          if (recorded.json?.stream === true) return await writeChatStream(res, recorded.json, answer, this.chatStreams, this.chatStream);
          return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(answer));
        }
        case '/v1/images/generations':
          return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(this.imageAnswer(recorded.json ?? {}, 'generations')));
        case '/v1/images/edits':
          return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(this.imageAnswer(recorded.form?.fields ?? {}, 'edits', recorded.form?.files ?? [], raw)));
        case '/v1/audio/speech': {
          const wav = recorded.json?.response_format === 'wav';
          const bytes = wav ? makeWav(0.5) : mp3(20);
          this.lastSpeech = bytes;
          return send(res, 200, { 'content-type': wav ? 'audio/wav' : 'audio/mpeg' }, bytes);
        }
        default:
          return send(res, 404, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: `no route ${path}` } }));
      }
    } catch (err) {
      if (!(err instanceof OpenAiRefusal)) throw err;
      this.refusals.push({ path, status: err.status, body: err.body });
      return send(res, err.status, { 'content-type': 'application/json' }, JSON.stringify(err.body));
    }
  }

  /** Writes the scripted stream (test/support/streamed-body.ts), counting what went out. */
  private async stream(res: ServerResponse, o: StreamedBody): Promise<void> {
    this.streamedBytes = 0;
    this.streamedBytes = await writeStreamedBody(res, { contentType: 'application/json', ...o });
  }

  private chatAnswer(body: any): ChatAnswer {
    const model = String(body?.model ?? '');
    const streamRefusal = streamParamsRefusal(body);
    if (streamRefusal) throw new OpenAiRefusal(streamRefusal.message, streamRefusal.param, streamRefusal.code);
    const formatRefusal = responseFormatRefusal(body);
    if (formatRefusal) throw new OpenAiRefusal(formatRefusal.message, formatRefusal.param, formatRefusal.code);
    if (REASONING_CHAT.test(model)) {
      // "Create chat completion": max_tokens is not compatible with reasoning models.
      if (body.max_tokens !== undefined) {
        throw new OpenAiRefusal("Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.", 'max_tokens', 'unsupported_parameter');
      }
      if (body.temperature !== undefined && body.temperature !== 1) {
        throw new OpenAiRefusal(`Unsupported value: 'temperature' does not support ${body.temperature} with this model. Only the default (1) value is supported.`, 'temperature', 'unsupported_value');
      }
    }
    return {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body?.model ?? 'unknown',
      choices: [{ index: 0, message: { role: 'assistant', content: this.chatReply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      ...(this.chatUsage ? { usage: { ...this.chatUsage, total_tokens: this.chatUsage.prompt_tokens + this.chatUsage.completion_tokens } } : {}),
    };
  }

  /**
   * An images answer, after the rules of the model's family (see IMAGE_FAMILIES). `body` is the
   * JSON of a generation or the multipart fields of an edit (strings).
   */
  private imageAnswer(body: Record<string, unknown>, endpoint: 'generations' | 'edits', files: RecordedFile[] = [], raw?: Buffer): unknown {
    const model = String(body.model ?? 'dall-e-2');
    const family = IMAGE_FAMILIES.find((f) => f.match.test(model));
    const n = body.n === undefined ? 1 : Number(body.n);
    const size = body.size === undefined ? undefined : String(body.size);
    if (family) {
      if (endpoint === 'edits' && family.edits === 0) {
        throw new OpenAiRefusal(`Invalid value: '${model}'. Supported values are: 'dall-e-2' and 'gpt-image-1'.`, 'model', 'invalid_value');
      }
      if (endpoint === 'edits' && files.filter((f) => f.field.startsWith('image')).length > family.edits) {
        throw new OpenAiRefusal(`${model} takes at most ${family.edits} image${family.edits === 1 ? '' : 's'} to edit.`, 'image', 'invalid_value');
      }
      if (endpoint === 'edits' && family.family === 'dall-e-2' && raw) {
        const image = files.find((f) => f.field.startsWith('image'));
        const dims = image ? pngSizes(raw).get(image.sha256) : undefined;
        if (!dims || dims.width !== dims.height) throw new OpenAiRefusal('Invalid input image - must be a square PNG image.', 'image', 'invalid_image');
      }
      if (!Number.isInteger(n) || n < 1 || n > family.maxN) {
        const message = family.maxN === 1 ? `Invalid 'n': ${model} supports only n=1.` : `Invalid 'n': integer above maximum value. Expected a value <= ${family.maxN}, but got ${n} instead.`;
        throw new OpenAiRefusal(message, 'n', family.maxN === 1 ? 'invalid_value' : 'integer_above_max_value');
      }
      if (size !== undefined && !(family.sizes as readonly string[]).includes(size)) {
        throw new OpenAiRefusal(`Invalid value: '${size}'. Supported values are: ${family.sizes.map((v) => `'${v}'`).join(', ')}.`, 'size', 'invalid_value');
      }
      if (body.response_format !== undefined) {
        if (!family.responseFormat) throw new OpenAiRefusal("Unknown parameter: 'response_format'.", 'response_format', 'unknown_parameter');
        if (body.response_format !== 'url' && body.response_format !== 'b64_json') {
          throw new OpenAiRefusal(`Invalid value: '${String(body.response_format)}'. Supported values are: 'url' and 'b64_json'.`, 'response_format', 'invalid_value');
        }
      }
    }
    const count = Math.max(1, Number.isInteger(n) ? n : 1);
    // dall-e answers by URL unless asked for b64_json; GPT image models always in base64. A
    // compatible server of another model answers base64 unless asked for a URL.
    const b64 = family ? !family.responseFormat || body.response_format === 'b64_json' : body.response_format !== 'url';
    const mode = this.imageMode !== 'request' ? this.imageMode : b64 ? 'b64' : 'url';
    // The images are of the size asked ("auto" and none: 1024x1024); a model it cannot parse: 16x16.
    const asked = /^(\d{2,4})x(\d{2,4})$/.exec(size ?? (family ? '1024x1024' : ''));
    const [width, height] = asked ? [Number(asked[1]), Number(asked[2])] : family ? [1024, 1024] : [16, 16];
    this.lastImages = [];
    const data = Array.from({ length: count }, () => {
      const png = makePng(width, height, this.imageSeed++);
      this.lastImages.push(png);
      if (mode === 'b64') return { b64_json: png.toString('base64'), ...(family?.family === 'dall-e-3' ? { revised_prompt: String(body.prompt ?? '') } : {}) };
      const name = `img-${this.imageSeed}.png`;
      this.files.set(name, png);
      return { url: `${this.origin}/files/${name}` };
    });
    const usage =
      family?.family === 'gpt-image'
        ? { usage: { input_tokens: 50, input_tokens_details: { text_tokens: 50, image_tokens: 0 }, output_tokens: 1056 * count, total_tokens: 50 + 1056 * count } }
        : {};
    return { created: Math.floor(Date.now() / 1000), data, ...usage };
  }
}

/** Width and height of each PNG file in a multipart body, by the sha256 of the file's bytes. */
function pngSizes(raw: Buffer): Map<string, { width: number; height: number }> {
  const out = new Map<string, { width: number; height: number }>();
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  for (let at = raw.indexOf(signature); at >= 0; at = raw.indexOf(signature, at + 1)) {
    const end = raw.indexOf(Buffer.from('IEND'), at);
    if (end < 0 || at + 24 > raw.length) break;
    const bytes = raw.subarray(at, end + 8);
    out.set(createHash('sha256').update(bytes).digest('hex'), { width: raw.readUInt32BE(at + 16), height: raw.readUInt32BE(at + 20) });
  }
  return out;
}

function send(res: ServerResponse, status: number, headers: Record<string, string>, body: string | Buffer): void {
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(body)) });
  res.end(body);
}

async function parseMultipart(raw: Buffer, contentType: string): Promise<{ fields: Record<string, string>; files: RecordedFile[] }> {
  const form = await new Request('http://fake.invalid/', { method: 'POST', headers: { 'content-type': contentType }, body: raw }).formData();
  const fields: Record<string, string> = {};
  const files: RecordedFile[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') fields[name] = value;
    else {
      const bytes = Buffer.from(await value.arrayBuffer());
      files.push({ field: name, name: value.name, type: value.type, size: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    }
  }
  return { fields, files };
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
