/**
 * A local Replicate for the replicate adapter's tests: node:http on 127.0.0.1 speaking the real
 * predictions API under /v1 (POST /v1/predictions with {version, input}, POST
 * /v1/models/{owner}/{name}/predictions with {input}, GET /v1/predictions/{id}, POST
 * /v1/predictions/{id}/cancel), and serving output files at GET /files/<name> on its own origin
 * and on a second server (another origin, on `otherHost`, 127.0.0.2 by default: loopback too, but
 * a different address a test can allow or not through EGRESS_ALLOW_CIDRS).
 *
 * Everything is recorded (method, path, headers with authorization, parsed JSON body, which
 * server); creations and cancels are counted. Each created prediction follows a script: how many
 * polls it stays `processing`, its final status, output, error and predict_time, or a hold (it
 * stays `processing` until `release()`). Scripted HTTP answers (401, 429 with Retry-After, 5xx …)
 * can be queued per kind of call and are answered before the normal handling. The state lives in
 * the test process, so a worker in a child process can be killed while the fake keeps counting.
 *
 * Like the real API (each rule names its page):
 * - refusals are problem details, `application/problem+json` `{title, detail, status}` (HTTP API
 *   reference, https://replicate.com/docs/reference/http): 422 for a create without an `input`
 *   object or with a version that is not 64 hex digits, 404 for an unknown prediction;
 * - statuses starting, processing, succeeded, failed, canceled and aborted, "the prediction
 *   exceeded its deadline before it could start running": no started_at, no predict_time
 *   (Prediction lifecycle, https://replicate.com/docs/topics/predictions/lifecycle);
 * - `metrics` of an ended prediction hold `predict_time` (the model's run time, what is billed)
 *   and `total_time` (queue time included), ibid.;
 * - `Prefer: wait` (or `wait=N`) on a create holds the answer until the prediction ends, so it
 *   comes back already finished with its output ("Create a prediction", sync mode,
 *   https://replicate.com/docs/topics/predictions/create-a-prediction); a held prediction is
 *   answered as it stands;
 * - outputs are whatever the model returns: a URL string, a list, an object, or text.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeStreamedBody } from './streamed-body.js';

export type CallKind = 'create' | 'get' | 'cancel' | 'file';

export interface RecordedRequest {
  kind: CallKind | 'other';
  /** 'own' for the API server, 'other' for the second origin. */
  server: 'own' | 'other';
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  json?: any;
  at: number;
}

/** How a created prediction behaves. */
export interface PredictionScript {
  /** GETs answered `processing` before the final status (default 1). */
  polls?: number;
  /** Stays `processing` until `release()` (then ends at the next poll). */
  hold?: boolean;
  status?: 'succeeded' | 'failed' | 'canceled' | 'aborted';
  /** The output of a succeeded prediction (e.g. file URLs from `fileUrl`). */
  output?: unknown;
  error?: string;
  /** metrics.predict_time of the ended prediction (default 1.5; an aborted one has none unless set). */
  predictTime?: number;
  /** metrics.total_time: prediction time plus time queued (default predict_time + 0.75). */
  totalTime?: number;
  /** Logs returned while it runs. */
  logs?: string;
}

/** A scripted HTTP answer. */
export interface ScriptedAnswer {
  status: number;
  headers?: Record<string, string>;
  json?: unknown;
}

export interface FakePrediction {
  id: string;
  model: string | undefined;
  version: string | undefined;
  input: Record<string, unknown>;
  script: PredictionScript;
  status: string;
  polls: number;
  released: boolean;
  createdAt: number;
  cancelledAt?: number;
}

export class FakeReplicate {
  readonly requests: RecordedRequest[] = [];
  readonly predictions = new Map<string, FakePrediction>();
  /** Ids of cancel calls, in order. */
  readonly cancels: string[] = [];
  creations = 0;
  /** The script of predictions created while `queue` is empty. */
  defaultScript: PredictionScript = {};
  /** Bytes written of the last streamed file before it ended or the client closed the connection. */
  streamedBytes = 0;
  private readonly streams = new Map<string, { bytes: number; declareLength: boolean }>();
  /** Awaited after a cancel marked its prediction cancelled and before it is answered (a slow provider). */
  beforeCancelAnswer: ((id: string) => Promise<void>) | undefined;
  private readonly queue: PredictionScript[] = [];
  private readonly answers = new Map<CallKind, ScriptedAnswer[]>();
  private readonly files = new Map<string, Buffer>();
  private readonly servers: Server[] = [];
  private readonly sockets = new Set<ServerResponse>();
  url = '';
  otherUrl = '';

  private constructor() {}

  static async start(o: { otherHost?: string } = {}): Promise<FakeReplicate> {
    const fake = new FakeReplicate();
    fake.url = await fake.listen('own', '127.0.0.1');
    fake.otherUrl = await fake.listen('other', o.otherHost ?? '127.0.0.2');
    return fake;
  }

  /** The API base for the providers file. */
  get baseUrl(): string {
    return `${this.url}/v1`;
  }

  get port(): number {
    return Number(new URL(this.url).port);
  }

  /** Serves `bytes` at /files/<name> on both origins; returns the URL on the chosen one. */
  putFile(name: string, bytes: Buffer, origin: 'own' | 'other' = 'own'): string {
    this.files.set(name, bytes);
    return this.fileUrl(name, origin);
  }

  /**
   * Serves `bytes` zero bytes at /files/<name>, written in 64 KiB chunks until done or the client
   * closes the connection (`streamedBytes`); with `declareLength` the Content-Length says so first.
   */
  putStream(name: string, o: { bytes: number; declareLength?: boolean }, origin: 'own' | 'other' = 'own'): string {
    this.streams.set(name, { bytes: o.bytes, declareLength: o.declareLength === true });
    return this.fileUrl(name, origin);
  }

  fileUrl(name: string, origin: 'own' | 'other' = 'own'): string {
    return `${origin === 'own' ? this.url : this.otherUrl}/files/${encodeURIComponent(name)}`;
  }

  /** The script of the next created prediction (queued; `defaultScript` afterwards). */
  next(script: PredictionScript): void {
    this.queue.push(script);
  }

  /** Answers the next calls of `kind` with these, in order, before the normal handling. */
  answer(kind: CallKind, ...answers: ScriptedAnswer[]): void {
    this.answers.set(kind, [...(this.answers.get(kind) ?? []), ...answers]);
  }

  /** Lets held predictions (all, or the one named) end at their next poll. */
  release(id?: string): void {
    for (const p of this.predictions.values()) if (id === undefined || p.id === id) p.released = true;
  }

  /** Requests of one kind, in order. */
  calls(kind: CallKind): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === kind);
  }

  /** The last created prediction. */
  get last(): FakePrediction | undefined {
    return [...this.predictions.values()].at(-1);
  }

  /** Forgets recorded requests, scripts and counts (files and predictions stay readable). */
  reset(): void {
    this.requests.length = 0;
    this.cancels.length = 0;
    this.creations = 0;
    this.queue.length = 0;
    this.answers.clear();
    this.streamedBytes = 0;
    this.defaultScript = {};
    this.beforeCancelAnswer = undefined;
  }

  /** Waits (polling the fake's own state) until `done` holds. */
  async waitFor(done: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      if (Date.now() > deadline) throw new Error(`fake replicate: timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async close(): Promise<void> {
    for (const res of this.sockets) res.destroy();
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.closeAllConnections();
            s.close(() => resolve());
          }),
      ),
    );
  }

  private async listen(which: 'own' | 'other', host: string): Promise<string> {
    const server = createServer((req, res) => {
      this.sockets.add(res);
      res.on('close', () => this.sockets.delete(res));
      this.handle(which, req, res).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: String(err) }));
      });
    });
    this.servers.push(server);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, host, resolve);
    });
    return `http://${host}:${(server.address() as AddressInfo).port}`;
  }

  private present(p: FakePrediction): Record<string, unknown> {
    const ended = ['succeeded', 'failed', 'canceled', 'aborted'].includes(p.status);
    const aborted = p.status === 'aborted';
    const predictTime = aborted ? p.script.predictTime : (p.script.predictTime ?? 1.5);
    const metrics: Record<string, number> = {};
    if (ended && predictTime !== undefined) metrics.predict_time = predictTime;
    if (ended) metrics.total_time = p.script.totalTime ?? (predictTime ?? 0) + 0.75;
    return {
      id: p.id,
      model: p.model ?? 'owner/versioned',
      version: p.version ?? 'hidden',
      input: p.input,
      logs: p.script.logs ?? '',
      output: p.status === 'succeeded' ? (p.script.output ?? null) : null,
      error: p.status === 'failed' ? (p.script.error ?? 'the model failed') : null,
      status: p.status,
      created_at: new Date(p.createdAt).toISOString(),
      started_at: p.status === 'starting' || aborted ? null : new Date(p.createdAt).toISOString(),
      completed_at: ended ? new Date().toISOString() : null,
      metrics,
      urls: { get: `${this.baseUrl}/predictions/${p.id}`, cancel: `${this.baseUrl}/predictions/${p.id}/cancel` },
    };
  }

  private async handle(server: 'own' | 'other', req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const url = new URL(req.url ?? '/', 'http://fake');
    const path = url.pathname;
    const method = req.method ?? 'GET';
    let json: any;
    if (raw.length > 0) {
      try {
        json = JSON.parse(raw.toString('utf8'));
      } catch {
        json = undefined;
      }
    }
    const file = method === 'GET' ? /^\/files\/([^/]+)$/.exec(path) : null;
    const create = server === 'own' && method === 'POST' ? (path === '/v1/predictions' ? [] : /^\/v1\/models\/([^/]+)\/([^/]+)\/predictions$/.exec(path)) : null;
    const get = server === 'own' && method === 'GET' ? /^\/v1\/predictions\/([^/]+)$/.exec(path) : null;
    const cancel = server === 'own' && method === 'POST' ? /^\/v1\/predictions\/([^/]+)\/cancel$/.exec(path) : null;
    const kind: CallKind | 'other' = file ? 'file' : create ? 'create' : get ? 'get' : cancel ? 'cancel' : 'other';
    this.requests.push({ kind, server, method, path, headers: req.headers, ...(json !== undefined ? { json } : {}), at: Date.now() });

    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    /** A refusal as the API words it: problem details (HTTP API reference). */
    const problem = (status: number, title: string, detail: string) => send(status, { title, detail, status }, { 'content-type': 'application/problem+json' });
    if (kind !== 'other') {
      const scripted = this.answers.get(kind)?.shift();
      if (scripted) {
        if (scripted.json !== undefined) return send(scripted.status, scripted.json, scripted.headers);
        res.writeHead(scripted.status, { 'content-type': 'application/problem+json', ...scripted.headers });
        res.end(JSON.stringify({ title: `Scripted ${scripted.status}`, detail: `scripted ${scripted.status}`, status: scripted.status }));
        return;
      }
    }

    if (file && this.streams.has(decodeURIComponent(file[1]!))) return this.stream(res, this.streams.get(decodeURIComponent(file[1]!))!);
    if (file) {
      const bytes = this.files.get(decodeURIComponent(file[1]!));
      if (!bytes) return problem(404, 'Not found', 'No such file.');
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) });
      res.end(bytes);
      return;
    }
    if (create) {
      const body = (json ?? {}) as { version?: unknown; input?: unknown };
      if (typeof body.input !== 'object' || body.input === null || Array.isArray(body.input)) return problem(422, 'Input validation failed', 'input is required and must be an object');
      if (create.length === 0 && (typeof body.version !== 'string' || !/^[0-9a-f]{64}$/.test(body.version))) {
        return problem(422, 'Invalid version or not permitted', 'The specified version does not exist (or perhaps you don\'t have permission to use it?)');
      }
      this.creations++;
      const p: FakePrediction = {
        id: randomBytes(10).toString('hex'),
        model: create.length > 0 ? `${create[1]}/${create[2]}` : undefined,
        version: typeof body.version === 'string' ? body.version : undefined,
        input: body.input as Record<string, unknown>,
        script: this.queue.shift() ?? { ...this.defaultScript },
        status: 'starting',
        polls: 0,
        released: false,
        createdAt: Date.now(),
      };
      this.predictions.set(p.id, p);
      // Sync mode: `Prefer: wait` answers once the prediction has ended (a held one as it stands).
      if (/^\s*wait(=\d+)?\s*$/i.test(String(req.headers.prefer ?? '')) && !p.script.hold) p.status = p.script.status ?? 'succeeded';
      return send(201, this.present(p));
    }
    if (get) {
      const p = this.predictions.get(get[1]!);
      if (!p) return problem(404, 'Not found', 'Not found.');
      if (p.status === 'starting' || p.status === 'processing') {
        p.polls++;
        const waiting = p.script.hold ? !p.released : p.polls <= (p.script.polls ?? 1);
        p.status = waiting ? 'processing' : (p.script.status ?? 'succeeded');
      }
      return send(200, this.present(p));
    }
    if (cancel) {
      const p = this.predictions.get(cancel[1]!);
      this.cancels.push(cancel[1]!);
      if (!p) return problem(404, 'Not found', 'Not found.');
      if (p.status === 'starting' || p.status === 'processing') {
        p.status = 'canceled';
        p.cancelledAt = Date.now();
      }
      if (this.beforeCancelAnswer) await this.beforeCancelAnswer(p.id);
      return send(200, this.present(p));
    }
    problem(404, 'Not found', 'Not found.');
  }

  /** Writes a file of `putStream` (test/support/streamed-body.ts), counting what went out. */
  private async stream(res: ServerResponse, o: { bytes: number; declareLength: boolean }): Promise<void> {
    this.streamedBytes = 0;
    this.streamedBytes = await writeStreamedBody(res, o);
  }
}
