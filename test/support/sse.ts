/** Helpers for job-stream tests: an EventSource with API headers, a raw SSE frame reader. */
import { EventSource } from 'eventsource';
import { request, type Agent, type ClientRequest } from 'node:http';
import { Readable } from 'node:stream';
import type { TestContext } from './harness.js';
import type { Tenant } from './seed.js';

/**
 * GET over its own connection (node:http, no agent) as a fetch Response. Cancelling the body
 * destroys that connection; undici's pooled fetch opens a spare connection when a streamed
 * response is cancelled, which would hold app.close() until the server's keep-alive timeout.
 */
export function httpGet(url: string, headers: Record<string, string>): Promise<Response> {
  return streamGet(url, headers).response;
}

/**
 * httpGet with its request (to abort it); a header value may be a list, sent as several header
 * lines. With a keep-alive `agent` the connection stays open after the response, as a pooled
 * client's does (the shutdown tests: the server must close it).
 */
export function streamGet(url: string, headers: Record<string, string | string[]>, agent: Agent | false = false): { response: Promise<Response>; request: ClientRequest } {
  let req!: ClientRequest;
  const response = new Promise<Response>((resolve, reject) => {
    req = request(url, { headers, agent }, (res) => {
      const out = new Headers();
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
      const body = res.statusCode === 204 ? null : (Readable.toWeb(res) as ReadableStream<Uint8Array>);
      resolve(new Response(body, { status: res.statusCode, headers: out }));
    });
    req.on('error', reject);
    req.end();
  });
  return { response, request: req };
}

/**
 * POST of a JSON body over its own connection, as streamGet: the response as a fetch Response as
 * soon as its head arrives (a streamed run), and the request, to destroy it (a client going away).
 */
export function streamPost(url: string, headers: Record<string, string>, body: unknown): { response: Promise<Response>; request: ClientRequest } {
  const payload = JSON.stringify(body);
  let req!: ClientRequest;
  const response = new Promise<Response>((resolve, reject) => {
    req = request(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }, agent: false }, (res) => {
      const out = new Headers();
      for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) out.set(name, Array.isArray(value) ? value.join(', ') : value);
      resolve(new Response(Readable.toWeb(res) as ReadableStream<Uint8Array>, { status: res.statusCode, headers: out }));
    });
    req.on('error', reject);
    req.end(payload);
  });
  return { response, request: req };
}

export function apiHeaders(t: Pick<Tenant, 'secret' | 'workspace'>, extra: Record<string, string> = {}): Record<string, string> {
  return { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id, ...extra };
}

export interface ReceivedEvent {
  type: string;
  id: string;
  data: any;
}

/** An EventSource (the `eventsource` package) that sends the key and workspace headers. */
export function openEventSource(url: string, t: Pick<Tenant, 'secret' | 'workspace'>) {
  const events: ReceivedEvent[] = [];
  const errors: { code?: number; message?: string }[] = [];
  const es = new EventSource(url, {
    fetch: (input, init) => fetch(input, { ...init, headers: { ...(init.headers as Record<string, string>), ...apiHeaders(t) } }),
  });
  for (const type of ['job', 'gap']) {
    es.addEventListener(type, (e) => events.push({ type, id: (e as MessageEvent).lastEventId, data: JSON.parse((e as MessageEvent).data) }));
  }
  es.addEventListener('error', (e) => errors.push({ code: (e as { code?: number }).code, message: (e as { message?: string }).message }));
  return { es, events, errors };
}

export interface Frame {
  event?: string;
  id?: string;
  data?: string;
  comment?: string;
  retry?: string;
}

/** Reads SSE frames from a fetch response: `next()` gives the next frame, or undefined at the end of the stream. */
export function frameReader(res: Response) {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let ended = false;
  const frames: Frame[] = [];

  function parse(block: string): Frame {
    const frame: Frame = {};
    for (const line of block.split('\n')) {
      if (line.startsWith(':')) frame.comment = line.slice(1).trim();
      else {
        const i = line.indexOf(':');
        const field = line.slice(0, i);
        const value = line.slice(i + 1).replace(/^ /, '');
        if (field === 'event' || field === 'id' || field === 'data' || field === 'retry') frame[field] = value;
      }
    }
    return frame;
  }

  async function next(timeoutMs = 10_000): Promise<Frame | undefined> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const sep = buffer.indexOf('\n\n');
      if (sep >= 0) {
        const frame = parse(buffer.slice(0, sep));
        buffer = buffer.slice(sep + 2);
        frames.push(frame);
        return frame;
      }
      if (ended) return undefined;
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`no SSE frame within ${timeoutMs} ms; buffered: ${JSON.stringify(buffer)}`);
      let timer: NodeJS.Timeout | undefined;
      const chunk = await Promise.race([
        reader.read(),
        new Promise<never>((_, rej) => (timer = setTimeout(() => rej(new Error(`no SSE data within ${timeoutMs} ms`)), remaining))),
      ]).finally(() => clearTimeout(timer));
      if (chunk.done) ended = true;
      else buffer += decoder.decode(chunk.value, { stream: true });
    }
  }

  /** Every remaining frame up to the end of the stream. */
  async function rest(timeoutMs = 10_000): Promise<Frame[]> {
    const out: Frame[] = [];
    for (let f = await next(timeoutMs); f; f = await next(timeoutMs)) out.push(f);
    return out;
  }

  return { next, rest, frames, cancel: () => reader.cancel().catch(() => {}) };
}

/** The stream slots a workspace holds (one per open job stream). */
export async function slotCount(ctx: TestContext, workspaceId: string): Promise<number> {
  return (await ctx.deps.db.selectFrom('stream_slots').select('id').where('workspace_id', '=', workspaceId).execute()).length;
}
