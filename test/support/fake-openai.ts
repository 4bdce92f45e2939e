/**
 * A local OpenAI-compatible server for the openai adapter's tests: node:http on 127.0.0.1, the
 * real wire format of POST /v1/chat/completions, /v1/images/generations, /v1/images/edits and
 * /v1/audio/speech, and GET /files/<name> for images answered by URL. It records every request
 * (method, path, headers, parsed JSON or multipart body) and can be scripted per path with a queue
 * of answers (status, headers such as retry-after, JSON or raw bytes, a delay before answering).
 * Nothing of the `openai` package is mocked: the adapter talks HTTP to this server.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { makePng, makeWav } from '../../src/providers/sim-files.js';
import { mp3 } from './media.js';

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
}

export type FakePath = '/v1/chat/completions' | '/v1/images/generations' | '/v1/images/edits' | '/v1/audio/speech';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export class FakeOpenAi {
  readonly requests: RecordedRequest[] = [];
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
  private readonly scripts = new Map<string, Scripted[]>();
  private readonly files = new Map<string, Buffer>();
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

  /** Requests to `path` (all when omitted). */
  seen(path?: string): RecordedRequest[] {
    return path ? this.requests.filter((r) => r.path === path) : [...this.requests];
  }

  /** Forgets requests, scripts and settings between tests. */
  reset(): void {
    this.requests.length = 0;
    this.scripts.clear();
    this.files.clear();
    this.chatUsage = { prompt_tokens: 17, completion_tokens: 9 };
    this.chatReply = 'Hello from the fake.';
    this.imageMode = 'request';
    this.lastImages = [];
    this.lastSpeech = undefined;
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
      const file = this.files.get(path.slice('/files/'.length));
      if (!file) return send(res, 404, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: 'no such file' } }));
      return send(res, 200, { 'content-type': 'image/png' }, file);
    }

    const scripted = this.scripts.get(path)?.shift();
    if (scripted?.delayMs) {
      await new Promise((resolve) => setTimeout(resolve, scripted.delayMs).unref());
      if (res.destroyed) return;
    }
    if (scripted && (scripted.json !== undefined || scripted.bytes !== undefined || (scripted.status ?? 200) >= 300)) {
      const status = scripted.status ?? 200;
      const headers: Record<string, string> = { ...scripted.headers };
      if (scripted.bytes !== undefined) {
        headers['content-type'] ??= scripted.contentType ?? 'application/octet-stream';
        return send(res, status, headers, scripted.bytes);
      }
      headers['content-type'] ??= 'application/json';
      const body = scripted.json ?? { error: { message: `scripted ${status}`, type: 'fake_error', code: null } };
      return send(res, status, headers, JSON.stringify(body));
    }

    if (req.method !== 'POST') return send(res, 405, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: 'method not allowed' } }));
    switch (path) {
      case '/v1/chat/completions':
        return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(this.chatAnswer(recorded.json)));
      case '/v1/images/generations':
        return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(this.imageAnswer(recorded.json ?? {})));
      case '/v1/images/edits':
        return send(res, 200, { 'content-type': 'application/json' }, JSON.stringify(this.imageAnswer(recorded.form?.fields ?? {})));
      case '/v1/audio/speech': {
        const wav = recorded.json?.response_format === 'wav';
        const bytes = wav ? makeWav(0.5) : mp3(20);
        this.lastSpeech = bytes;
        return send(res, 200, { 'content-type': wav ? 'audio/wav' : 'audio/mpeg' }, bytes);
      }
      default:
        return send(res, 404, { 'content-type': 'application/json' }, JSON.stringify({ error: { message: `no route ${path}` } }));
    }
  }

  private chatAnswer(body: any): unknown {
    return {
      id: `chatcmpl-${this.requests.length}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: body?.model ?? 'unknown',
      choices: [{ index: 0, message: { role: 'assistant', content: this.chatReply, refusal: null }, logprobs: null, finish_reason: 'stop' }],
      ...(this.chatUsage ? { usage: { ...this.chatUsage, total_tokens: this.chatUsage.prompt_tokens + this.chatUsage.completion_tokens } } : {}),
    };
  }

  private imageAnswer(body: Record<string, unknown>): unknown {
    const n = Math.max(1, Number(body.n ?? 1));
    const mode = this.imageMode !== 'request' ? this.imageMode : body.response_format === 'url' ? 'url' : 'b64';
    this.lastImages = [];
    const data = Array.from({ length: n }, () => {
      const png = makePng(16, 16, this.imageSeed++);
      this.lastImages.push(png);
      if (mode === 'b64') return { b64_json: png.toString('base64'), revised_prompt: null };
      const name = `img-${this.imageSeed}.png`;
      this.files.set(name, png);
      return { url: `${this.origin}/files/${name}` };
    });
    return { created: Math.floor(Date.now() / 1000), data };
  }
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
