/**
 * createClient: every public endpoint of the service as a typed method, on the transport of
 * transport.ts. Reads are retried; runs and retries get an Idempotency-Key (a new UUID unless
 * given) and are retried with that same key; other writes are sent once.
 */
import { webCryptoSha256, type Sha256Factory } from './hash.js';
import { readOutputDocument, type OutputDocument, type OutputReadOptions } from './output.js';
import { streamRun, type RunStreamOptions } from './run-stream.js';
import { sleep, Transport, type TransportOptions } from './transport.js';
import { uploadMedia, type UploadOptions, type UploadSource } from './upload.js';
import { waitForJob, type WaitOptions } from './wait.js';
import type {
  Allocation,
  Balance,
  CostReport,
  Estimate,
  EventPage,
  TestEventSent,
  Job,
  JobSummary,
  MediaDownload,
  MediaItem,
  OperationId,
  OperationInput,
  OperationResult,
  Page,
  PageParams,
  Queue,
  QueuedRun,
  RunResponse,
  ServiceEvent,
  Tool,
  Transaction,
  Usage,
  UsageHistory,
  Voice,
  VoiceDeleted,
  Webhook,
  WebhookCreate,
  WebhookDelivery,
  WebhookUpdate,
  WebhookWithSecret,
  Workspace,
} from './types.js';

export interface ClientOptions extends TransportOptions {
  /** The SHA-256 used to verify outputs and uploads (default: WebCrypto; the Node entry passes node:crypto). */
  sha256?: Sha256Factory;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface KeyedCallOptions extends CallOptions {
  /** 1 to 128 characters; default: a new random UUID. Reuse it only for the same request. */
  idempotencyKey?: string;
}

/** A time range: RFC 3339 date-times or YYYY-MM-DD dates (UTC), as strings or Dates. */
export interface RangeParams {
  from?: string | Date;
  to?: string | Date;
}

export interface CostParams extends RangeParams {
  /** UTC bucket width (default day). */
  bucket?: 'hour' | 'day' | 'month';
  groupBy?: ('operationId' | 'keyId' | 'executionOrigin')[];
}

export interface UsageHistoryParams extends RangeParams {
  /** minute (the last 24 hours), hour (default) or day. */
  bucket?: 'minute' | 'hour' | 'day';
  groupBy?: ('keyId' | 'operation')[];
}

export interface TransactionListParams extends PageParams, RangeParams {}

const time = (t: string | Date | undefined) => (t instanceof Date ? t.toISOString() : t);
const range = (p: RangeParams) => ({ from: time(p.from), to: time(p.to) });

/** The lines of a streamed text body (CSV), as they arrive. */
async function* linesOf(res: Response): AsyncGenerator<string> {
  if (!res.body) return;
  const decoder = new TextDecoder();
  let rest = '';
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    rest += decoder.decode(chunk, { stream: true });
    let at: number;
    while ((at = rest.indexOf('\r\n')) >= 0) {
      yield rest.slice(0, at);
      rest = rest.slice(at + 2);
    }
  }
  rest += decoder.decode();
  if (rest) yield rest;
}

export interface EventListParams extends PageParams {
  /** Only these event types. */
  types?: string[];
}

export interface EventIterateOptions extends EventListParams, CallOptions {
  /** Keep polling for new events after the last page (default false: stop when caught up). */
  follow?: boolean;
  /** Delay between polls of an empty feed while following (default 1000 ms; grows to 5 s while idle). */
  pollIntervalMs?: number;
}

/** Every item of a cursor-paged list, page after page. */
export async function* paginate<T>(fetchPage: (cursor: string | undefined) => Promise<Page<T>>, cursor?: string): AsyncGenerator<T> {
  let next: string | null | undefined = cursor;
  do {
    const page = await fetchPage(next ?? undefined);
    yield* page.items;
    next = page.nextCursor;
  } while (next);
}

const id = (value: string) => encodeURIComponent(value);
const newKey = () => globalThis.crypto.randomUUID();

/** `test` for a test key's secret (`wask_test_…`), else `live` (docs/decisions.md "Test mode"). */
export function modeOfSecret(apiKey: string): 'live' | 'test' {
  return apiKey.startsWith('wask_test_') ? 'test' : 'live';
}

/** The request helpers every resource of a client is built on. */
interface Calls {
  transport: Transport;
  sha256: Sha256Factory;
  get<T>(path: string, query?: Record<string, string | number | readonly string[] | undefined>, o?: CallOptions): Promise<T>;
  post<T>(path: string, json?: unknown, o?: CallOptions): Promise<T>;
  /** A POST with an Idempotency-Key (given, or one new per call), retried safely. */
  postKeyed<T>(path: string, json: unknown, o?: KeyedCallOptions): Promise<T>;
  del<T>(path: string, o?: CallOptions): Promise<T>;
}

function callsOf(options: ClientOptions): Calls {
  const transport = new Transport(options);
  return {
    transport,
    sha256: options.sha256 ?? webCryptoSha256,
    get: async (path, query, o = {}) => (await transport.json<any>({ method: 'GET', path, query, signal: o.signal, retry: true })).data,
    post: async (path, json, o = {}) => (await transport.json<any>({ method: 'POST', path, json, signal: o.signal, retry: false })).data,
    postKeyed: async (path, json, o = {}) =>
      (await transport.json<any>({ method: 'POST', path, json, headers: { 'idempotency-key': o.idempotencyKey ?? newKey() }, signal: o.signal, retry: true })).data,
    del: async (path, o = {}) => (await transport.json<any>({ method: 'DELETE', path, signal: o.signal, retry: false })).data,
  };
}

const page = (p: PageParams = {}) => ({ limit: p.limit, cursor: p.cursor });

function eventsApi({ get }: Calls) {
  const events = {
    /** One page of the workspace event feed, oldest first; `nextCursor` is never null. */
    list: (params: EventListParams = {}, o?: CallOptions) =>
      get<EventPage>('/v1/events', { ...page(params), types: params.types?.length ? params.types.join(',') : undefined }, o),
    /** Pages of the feed from `cursor`; with `follow`, forever (empty pages are not yielded). */
    async *pages(params: EventIterateOptions = {}): AsyncGenerator<EventPage> {
      let cursor = params.cursor;
      let idle = 0;
      for (;;) {
        const p = await events.list({ ...params, cursor }, { signal: params.signal });
        cursor = p.nextCursor;
        if (p.items.length) {
          idle = 0;
          yield p;
        }
        if (p.hasMore) continue;
        if (!params.follow) return;
        const base = params.pollIntervalMs ?? 1000;
        await sleep(Math.min(Math.max(base, 5000), base * 1.5 ** idle++), params.signal);
      }
    },
    /** Every event from `cursor` (default: the start of the feed); with `follow`, waits for new ones. */
    async *iterate(params: EventIterateOptions = {}): AsyncGenerator<ServiceEvent> {
      for await (const p of events.pages(params)) yield* p.items;
    },
  };

  return events;
}

function jobsApi({ transport, sha256, get, post, postKeyed }: Calls) {
  const jobs = {
    list: (params?: PageParams, o?: CallOptions) => get<Page<JobSummary>>('/v1/jobs', page(params), o),
    iterate: (params: PageParams = {}) => paginate((cursor) => jobs.list({ ...params, cursor }), params.cursor),
    get: (jobId: string, o?: CallOptions) => get<Job>(`/v1/jobs/${id(jobId)}`, undefined, o),
    cancel: (jobId: string, o?: CallOptions) => post<Job>(`/v1/jobs/${id(jobId)}/cancel`, undefined, o),
    /** Puts a failed job back to pending (same jobId); retried safely with one Idempotency-Key. */
    retry: (jobId: string, o?: KeyedCallOptions) => postKeyed<QueuedRun>(`/v1/jobs/${id(jobId)}/retry`, undefined, o),
    /** Resolves with the job's terminal snapshot (completed, failed or cancelled). */
    wait: (jobId: string, o?: WaitOptions) => waitForJob(transport, jobId, o),
    /** The complete output, read and verified page by page, parsed. */
    output: async <T = unknown>(jobId: string, o?: OutputReadOptions): Promise<T> => (await readOutputDocument<T>(transport, sha256, jobId, o)).result,
    /** The complete output with its text, digest, size and how it was read. */
    outputDocument: <T = unknown>(jobId: string, o?: OutputReadOptions): Promise<OutputDocument<T>> => readOutputDocument<T>(transport, sha256, jobId, o),
  };

  return jobs;
}

function runsApi({ transport, postKeyed }: Calls, jobs: ReturnType<typeof jobsApi>) {
  const runs = {
    /**
     * Runs an operation: 200 `{kind: 'result', result}` for a synchronous one, 202 `{kind: 'job', jobId}`
     * for a queued one. Network failures, 5xx and 429 are retried with the same Idempotency-Key.
     */
    create: <Op extends OperationId>(operationId: Op, input: OperationInput<Op>, o?: KeyedCallOptions) =>
      postKeyed<RunResponse<Op>>('/v1/runs', { operationId, input }, o),
    /**
     * Runs an operation and yields its reply as it is generated (chat.generate): `delta` events with
     * text, then one `result` event (runs.create's answer as `data`, and the job). Other operations
     * yield the `result` alone. Stopping early (break, `signal`) stops the run: its job is cancelled,
     * charged what was consumed.
     */
    stream: <Op extends OperationId>(operationId: Op, input: OperationInput<Op>, o?: RunStreamOptions) => streamRun(transport, operationId, input, o),
    /** create, then (for a queued operation) wait and read the complete output. */
    async complete<Op extends OperationId>(operationId: Op, input: OperationInput<Op>, o: KeyedCallOptions & WaitOptions = {}): Promise<{ job: Job | undefined; status: string; result: OperationResult<Op> | null; costMillicents: number; errorCode: string | null }> {
      const run = await runs.create(operationId, input, o);
      if (run.kind === 'result') return { job: undefined, status: run.status, result: run.result, costMillicents: run.costMillicents, errorCode: run.errorCode };
      const job = await jobs.wait(run.jobId, o);
      const result = job.status === 'completed' ? await jobs.output<OperationResult<Op>>(job.id, { signal: o.signal }) : null;
      return { job, status: job.status, result, costMillicents: job.costMillicents, errorCode: job.errorCode };
    },
  };

  return runs;
}

function mediaApi({ transport, sha256, get }: Calls) {
  const media = {
    list: (params?: PageParams, o?: CallOptions) => get<Page<MediaItem>>('/v1/media', page(params), o),
    iterate: (params: PageParams = {}) => paginate((cursor) => media.list({ ...params, cursor }), params.cursor),
    get: (mediaId: string, o?: CallOptions) => get<MediaItem>(`/v1/media/${id(mediaId)}`, undefined, o),
    /** Uploads a Blob, bytes or a stream and checks the stored sha256 against the bytes sent. */
    upload: (source: UploadSource, o?: UploadOptions) => uploadMedia(transport, sha256, source, o),
    /** A signed download URL (works without the key until expiresAt). */
    downloadUrl: (mediaId: string, o?: CallOptions) => get<MediaDownload>(`/v1/media/${id(mediaId)}/download`, undefined, o),
  };

  return media;
}

function voicesApi({ get, del }: Calls) {
  /** Workspace voices (made by voice.clone runs; speech.generate speaks with one as `voiceId`). */
  const voices = {
    list: (params?: PageParams, o?: CallOptions) => get<Page<Voice>>('/v1/voices', page(params), o),
    iterate: (params: PageParams = {}) => paginate((cursor) => voices.list({ ...params, cursor }), params.cursor),
    get: (voiceId: string, o?: CallOptions) => get<Voice>(`/v1/voices/${id(voiceId)}`, undefined, o),
    /** For good: runs naming it are refused, queued jobs naming it fail VOICE_DELETED; its reference audio stays as media. */
    delete: (voiceId: string, o?: CallOptions) => del<VoiceDeleted>(`/v1/voices/${id(voiceId)}`, o),
  };

  return voices;
}

/** Credits, spending and usage: the balance, the ledger, costs and usage points. */
function moneyApi({ transport, get }: Calls) {
  return {
    balance: {
      get: (params?: PageParams, o?: CallOptions) => get<Balance>('/v1/balance', page(params), o),
      /** Every credit allocation, page after page. */
      allocations: (params: PageParams = {}): AsyncGenerator<Allocation> =>
        paginate(async (cursor) => {
          const b = await get<Balance>('/v1/balance', page({ ...params, cursor }));
          return { items: b.allocations, nextCursor: b.nextCursor };
        }, params.cursor),
    },
    transactions: {
      list: (params: TransactionListParams = {}, o?: CallOptions) => get<Page<Transaction>>('/v1/transactions', { ...page(params), ...range(params) }, o),
      /** Every ledger entry (of the range, when given), newest first, page after page. */
      iterate: (params: TransactionListParams = {}): AsyncGenerator<Transaction> =>
        paginate((cursor) => get<Page<Transaction>>('/v1/transactions', { ...page({ ...params, cursor }), ...range(params) }), params.cursor),
      /** The ledger of the range as CSV lines (the header first), oldest first, streamed as the service sends it. */
      async *csv(params: RangeParams = {}, o: CallOptions = {}): AsyncGenerator<string> {
        const res = await transport.send({ method: 'GET', path: '/v1/transactions', query: { format: 'csv', ...range(params) }, signal: o.signal, retry: true });
        yield* linesOf(res);
      },
    },
    costs: {
      /** Spending per UTC bucket (hour, day, month), grouped by operationId, keyId and/or executionOrigin, with totals. */
      list: (params: CostParams = {}, o?: CallOptions) =>
        get<CostReport>('/v1/costs', { bucket: params.bucket, ...range(params), groupBy: params.groupBy?.length ? params.groupBy : undefined }, o),
      /** The same lines as CSV (the header first). */
      async *csv(params: CostParams = {}, o: CallOptions = {}): AsyncGenerator<string> {
        const query = { format: 'csv', bucket: params.bucket, ...range(params), groupBy: params.groupBy?.length ? params.groupBy : undefined };
        const res = await transport.send({ method: 'GET', path: '/v1/costs', query, signal: o.signal, retry: true });
        yield* linesOf(res);
      },
    },
    usage: {
      get: (o?: CallOptions) => get<Usage>('/v1/usage', undefined, o),
      /** Usage points and 429s per UTC minute, hour or day, grouped by keyId and/or operation. */
      history: (params: UsageHistoryParams = {}, o?: CallOptions) =>
        get<UsageHistory>('/v1/usage/history', { bucket: params.bucket, ...range(params), groupBy: params.groupBy?.length ? params.groupBy : undefined }, o),
    },
  };
}

function webhooksApi({ get, post }: Calls) {
  return {
      list: (o?: CallOptions) => get<{ items: Webhook[] }>('/v1/webhooks', undefined, o),
      create: (body: WebhookCreate, o?: CallOptions) => post<WebhookWithSecret>('/v1/webhooks', body, o),
      update: (webhookId: string, body: WebhookUpdate, o?: CallOptions) => post<{ webhook: Webhook }>(`/v1/webhooks/${id(webhookId)}/update`, body, o),
      revoke: (webhookId: string, o?: CallOptions) => post<{ webhook: Webhook }>(`/v1/webhooks/${id(webhookId)}/revoke`, undefined, o),
      rotate: (webhookId: string, o?: CallOptions) => post<WebhookWithSecret>(`/v1/webhooks/${id(webhookId)}/rotate`, undefined, o),
      deliveries: (webhookId: string, o?: CallOptions) => get<{ items: WebhookDelivery[] }>(`/v1/webhooks/${id(webhookId)}/deliveries`, undefined, o),
      replay: (webhookId: string, deliveryId: string, o?: CallOptions) =>
        post<{ delivery: WebhookDelivery }>(`/v1/webhooks/${id(webhookId)}/deliveries/${id(deliveryId)}/replay`, undefined, o),
    };
}

export function createClient(options: ClientOptions) {
  const calls = callsOf(options);
  const { transport, get, post } = calls;
  const jobs = jobsApi(calls);
  return {
    transport,
    /** The key's mode, from its secret's prefix: `test` (wask_test_…, simulated work paid from the test balance) or `live`. */
    mode: modeOfSecret(options.apiKey),
    workspaces: { list: (o?: CallOptions) => get<{ items: Workspace[] }>('/v1/workspaces', undefined, o) },
    tools: { list: (o?: CallOptions) => get<{ items: Tool[] }>('/v1/tools', undefined, o) },
    estimates: {
      create: <Op extends OperationId>(operationId: Op, input: OperationInput<Op>, o?: CallOptions) => post<Estimate>('/v1/estimates', { operationId, input }, o),
    },
    runs: runsApi(calls, jobs),
    jobs,
    queue: { get: (o?: CallOptions) => get<Queue>('/v1/queue', undefined, o) },
    ...moneyApi(calls),
    media: mediaApi(calls),
    voices: voicesApi(calls),
    events: eventsApi(calls),
    /** Test mode's helpers (test keys only; a live key gets 403 TEST_MODE_ONLY). */
    testHelpers: {
      /** Sends a sample event of `type` to the workspace's test webhooks (and its test event feed), like `stripe trigger`. */
      triggerEvent: (type: string, o?: CallOptions) => post<TestEventSent>('/v1/test/webhook-events', { type }, o),
    },
    webhooks: webhooksApi(calls),
  };
}

export type Client = ReturnType<typeof createClient>;
