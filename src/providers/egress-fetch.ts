/**
 * A WHATWG `fetch` for SDK clients (the `openai` package) that sends every request through the
 * egress client with the provider layer's retries (src/providers/http.ts): the SDK's own retries
 * are off, so this is the only place a call is repeated. Only the headers a provider needs are
 * forwarded (the SDK adds platform headers and reads others from the environment); without a key
 * no Authorization header is sent at all.
 *
 * A non-2xx answer that stays after the retries is thrown as the ProviderError of its status (the
 * SDK wraps it in APIConnectionError with the ProviderError as `cause`); the caller's abort is
 * rethrown unchanged.
 *
 * A request that asks for a stream (`"stream":true` in its JSON body: a streamed chat completion)
 * and is answered 2xx with `text/event-stream` resolves as soon as the answer's head arrives, with
 * a body that carries the events as the egress client reads them (within the same deadline and
 * size bound); a failure after that errors the body, and cancelling the body aborts the request.
 * Every other answer is read whole first, as before.
 */
import type { Egress, EgressResponse } from '../egress/types.js';
import { callProvider, type ProviderCall, type RetryPolicy } from './http.js';

export interface EgressFetchOptions {
  /** Deadline of one try (connect, headers and body). */
  timeoutMs: number;
  /** Largest answer accepted. */
  maxBytes: number;
  policy: RetryPolicy;
  /** False: the Authorization header the SDK always builds is dropped (keyless servers). */
  sendAuthorization: boolean;
}

/** Request headers passed on to the provider; everything else the SDK sets is dropped. */
const FORWARDED = new Set(['authorization', 'content-type', 'accept']);
/** Answer headers the body no longer matches once the egress client has read (and decoded) it. */
const BODY_FRAMING = new Set(['content-encoding', 'content-length', 'transfer-encoding']);
/** Statuses a WHATWG Response may not carry a body with. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function egressFetch(egress: Egress, o: EgressFetchOptions): typeof fetch {
  return async (input, init) => {
    let url: string;
    let method: string;
    let requestHeaders: Headers;
    let body: Buffer | undefined;
    if ((typeof input === 'string' || input instanceof URL) && (init?.body == null || typeof init.body === 'string')) {
      // JSON calls (every chat completion): a WHATWG Request would copy the body once more for nothing.
      url = String(input);
      method = (init?.method ?? 'GET').toUpperCase();
      requestHeaders = new Headers(init?.headers);
      body = typeof init?.body === 'string' && method !== 'GET' && method !== 'HEAD' ? Buffer.from(init.body, 'utf8') : undefined;
    } else {
      // A Request normalises the other body types the SDK sends (multipart FormData with its
      // boundary in content-type, Blobs) into bytes and headers.
      const request = new Request(input, { method: init?.method ?? 'GET', ...(init?.headers ? { headers: init.headers } : {}), ...(init?.body != null ? { body: init.body, duplex: 'half' } : {}) } as RequestInit);
      url = request.url;
      method = request.method.toUpperCase();
      requestHeaders = request.headers;
      body = method === 'GET' || method === 'HEAD' ? undefined : Buffer.from(await request.arrayBuffer());
    }
    if (method !== 'GET' && method !== 'POST' && method !== 'PUT' && method !== 'HEAD') throw new TypeError(`method ${method} is not supported by the provider client`);
    const headers: Record<string, string> = {};
    requestHeaders.forEach((value, name) => {
      if (!FORWARDED.has(name)) return;
      if (name === 'authorization' && !o.sendAuthorization) return;
      headers[name] = value;
    });
    const call = {
      method: method as 'GET' | 'POST' | 'PUT' | 'HEAD',
      headers,
      ...(body && body.length > 0 ? { body } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
      timeoutMs: o.timeoutMs,
      maxBytes: o.maxBytes,
    };
    if (typeof init?.body === 'string' && init.body.includes('"stream":true')) return streamedFetch(egress, url, call, o.policy);
    return bufferedAnswer(await callProvider(egress, url, call, o.policy));
  };
}

/** The answer's headers without those the body read by the egress client no longer matches. */
function answerHeaders(headers: EgressResponse['headers']): Headers {
  const out = new Headers();
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || BODY_FRAMING.has(name.toLowerCase())) continue;
    for (const v of Array.isArray(value) ? value : [value]) out.append(name, v);
  }
  return out;
}

function bufferedAnswer(res: EgressResponse): Response {
  const answer = { status: res.status, headers: answerHeaders(res.headers) };
  return NULL_BODY.has(res.status) ? new Response(null, answer) : (new BufferedResponse(res.body, answer) as unknown as Response);
}

/** Ends a streamed body; one the SDK cancelled is closed already. */
function closeQuietly(body: ReadableStreamDefaultController<Uint8Array>): void {
  try {
    body.close();
  } catch {
    /* cancelled */
  }
}

const isEventStream = (type: string | string[] | undefined): boolean => /^\s*text\/event-stream\b/i.test(Array.isArray(type) ? (type[0] ?? '') : (type ?? ''));

/**
 * A call whose 2xx `text/event-stream` answer is handed over at its head, its body fed chunk by
 * chunk (see the header). Cancelling the body (the SDK stops reading) aborts the request.
 */
function streamedFetch(egress: Egress, url: string, call: ProviderCall, policy: RetryPolicy): Promise<Response> {
  const local = new AbortController();
  const caller = call.signal;
  const forward = () => local.abort(caller?.reason);
  if (caller?.aborted) forward();
  else caller?.addEventListener('abort', forward, { once: true });
  return new Promise<Response>((resolve, reject) => {
    let body: ReadableStreamDefaultController<Uint8Array> | undefined;
    const onBody: ProviderCall['onBody'] = (head) => {
      if (head.status < 200 || head.status >= 300 || !isEventStream(head.headers['content-type'])) return undefined;
      const readable = new ReadableStream<Uint8Array>({
        start: (controller) => void (body = controller),
        cancel: () => local.abort(new DOMException('The stream was cancelled', 'AbortError')),
      });
      resolve(new Response(readable, { status: head.status, headers: answerHeaders(head.headers) }));
      return (chunk) => {
        // A body the SDK cancelled takes nothing more (its request is being aborted).
        if (!local.signal.aborted) body!.enqueue(view(chunk));
      };
    };
    callProvider(egress, url, { ...call, signal: local.signal, onBody }, policy)
      .then(
        (res) => (body ? closeQuietly(body) : resolve(bufferedAnswer(res))),
        // After the head, a failure (the deadline, an abort, an answer too large) errors the body.
        (err: unknown) => (body ? body.error(caller?.aborted ? caller.reason : err) : reject(caller?.aborted ? caller.reason : err)),
      )
      .finally(() => caller?.removeEventListener('abort', forward));
  });
}

const view = (bytes: Buffer): Uint8Array => new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/**
 * The answer handed to the SDK: a Response over the bytes the egress client has already read.
 * A plain Response built around them wraps them in a ReadableStream (with the AbortSignal and
 * transfer machinery that comes with one) only for `json()` to read them back out: about 17 µs
 * a call on the development VM against under 4 µs for this, on every provider call. The body
 * methods read the bytes directly, once, as a Response's body is read once; `body` (which the SDK
 * reads only for streamed answers, never asked for here) turns it into a plain Response first.
 */
/** Response, typed as a base class: the DOM typings declare its body methods as properties. */
const ResponseBase = Response as unknown as new (body: null, init: ResponseInit) => { readonly headers: Headers };

class BufferedResponse extends ResponseBase {
  #bytes: Buffer | undefined;
  #plain: Response | undefined;
  readonly #init: ResponseInit;

  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
    this.#init = init;
  }

  /** The bytes for one read; a second read fails as it does on any Response. */
  #take(): Buffer {
    const bytes = this.#bytes;
    if (bytes === undefined) throw new TypeError('Body is unusable: Body has already been read');
    this.#bytes = undefined;
    return bytes;
  }

  /** A plain Response over the bytes not yet read (or an already used one), once asked for. */
  #asPlain(): Response {
    if (!this.#plain) {
      if (this.#bytes === undefined) {
        this.#plain = new Response('', this.#init);
        void this.#plain.arrayBuffer();
      } else this.#plain = new Response(view(this.#take()), this.#init);
    }
    return this.#plain;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#asPlain().body;
  }

  get bodyUsed(): boolean {
    return this.#plain ? this.#plain.bodyUsed : this.#bytes === undefined;
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    if (this.#plain) return this.#plain.arrayBuffer();
    const bytes = this.#take();
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  }

  async blob(): Promise<Blob> {
    if (this.#plain) return this.#plain.blob();
    return new Blob([view(this.#take())], { type: this.headers.get('content-type') ?? '' });
  }

  async text(): Promise<string> {
    if (this.#plain) return this.#plain.text();
    return this.#take().toString('utf8');
  }

  async json(): Promise<any> {
    if (this.#plain) return this.#plain.json();
    return JSON.parse(this.#take().toString('utf8'));
  }

  async formData(): Promise<FormData> {
    return this.#asPlain().formData();
  }

  clone(): Response {
    if (this.#plain) return this.#plain.clone();
    if (this.#bytes === undefined) throw new TypeError('Response.clone: Body has already been consumed.');
    return new BufferedResponse(this.#bytes, this.#init) as unknown as Response;
  }
}
