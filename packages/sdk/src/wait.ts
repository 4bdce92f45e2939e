/**
 * jobs.wait: follows a job to a terminal status. Where the plan allows streams it reads the job's
 * server-sent events, resuming after a dropped connection with Last-Event-ID (the server sends
 * every later version, or `event: gap` and the current snapshot). Without streams (403
 * PLAN_REQUIRED, 429 CONCURRENCY_LIMITED, or `stream: false`) it polls the snapshot with
 * randomized back-off, honouring Retry-After.
 */
import { ConnectionError, WaitTimeoutError } from './errors.js';
import { readSse } from './sse.js';
import { backoffDelay, errorFromResponse, sleep, type Transport } from './transport.js';
import { isTerminal, type Job } from './types.js';

export interface WaitOptions {
  /** Called with every snapshot seen (progress, status). */
  onProgress?: (job: Job) => void;
  signal?: AbortSignal;
  /** Give up after this long (WaitTimeoutError); default: no limit. */
  timeoutMs?: number;
  /** false: poll only; true: stream only (errors are thrown); default 'auto'. */
  stream?: boolean | 'auto';
  /** First and longest polling delay (default 250 ms and 5 s). */
  pollMinMs?: number;
  pollMaxMs?: number;
}

/** Streams seen refused for this client (plan without streams): poll at once next time. */
const STREAMS_REFUSED = new WeakSet<Transport>();

function combinedSignal(signal: AbortSignal | undefined, timeoutMs: number | undefined): { signal: AbortSignal | undefined; timedOut: () => boolean } {
  if (timeoutMs === undefined) return { signal, timedOut: () => false };
  const timeout = AbortSignal.timeout(timeoutMs);
  return { signal: signal ? AbortSignal.any([signal, timeout]) : timeout, timedOut: () => timeout.aborted && !signal?.aborted };
}

export async function waitForJob(transport: Transport, jobId: string, options: WaitOptions = {}): Promise<Job> {
  const { signal, timedOut } = combinedSignal(options.signal, options.timeoutMs);
  try {
    const mode = options.stream ?? 'auto';
    if (mode !== false && !(mode === 'auto' && STREAMS_REFUSED.has(transport))) {
      const streamed = await streamJob(transport, jobId, options, signal, mode === true);
      if (streamed) return streamed;
    }
    return await pollJob(transport, jobId, options, signal);
  } catch (err) {
    if (timedOut()) throw new WaitTimeoutError(`job ${jobId} did not finish within ${options.timeoutMs} ms`);
    throw err;
  }
}

async function getJob(transport: Transport, jobId: string, signal: AbortSignal | undefined): Promise<Job> {
  return (await transport.json<Job>({ method: 'GET', path: `/v1/jobs/${encodeURIComponent(jobId)}`, signal, retry: true })).data;
}

/** The terminal snapshot, or undefined when streams are not available here (then the caller polls). */
async function streamJob(transport: Transport, jobId: string, options: WaitOptions, signal: AbortSignal | undefined, required: boolean): Promise<Job | undefined> {
  let lastEventId: string | undefined;
  let last: Job | undefined;
  for (let attempt = 0; ; ) {
    let res: Response;
    try {
      res = await fetchStream(transport, jobId, lastEventId, signal);
    } catch (err) {
      if (signal?.aborted) throw err;
      // Network failure: back off and resume; after as many failures as the client retries, poll
      // instead (polling's reads end in a ConnectionError if the service stays unreachable).
      if (attempt >= transport.maxRetries) {
        if (required) throw new ConnectionError(`job stream of ${jobId}: ${(err as Error)?.message ?? String(err)}`, { cause: err });
        return undefined;
      }
      await sleep(backoffDelay(attempt++, 250, 5000), signal);
      continue;
    }
    if (res.status === 204) return getJob(transport, jobId, signal); // the terminal version was already seen
    if (!res.ok) {
      const error = await errorFromResponse(res);
      if (!required && (error.code === 'PLAN_REQUIRED' || error.code === 'CONCURRENCY_LIMITED')) {
        if (error.code === 'PLAN_REQUIRED') STREAMS_REFUSED.add(transport);
        return undefined;
      }
      if (error.status >= 500 || error.status === 429) {
        await sleep(error.retryAfter !== undefined ? error.retryAfter * 1000 : backoffDelay(attempt++, 250, 5000), signal);
        continue;
      }
      throw error;
    }
    attempt = 0;
    try {
      for await (const frame of readSse(res.body!)) {
        if (frame.event !== 'job') continue; // `gap` is followed by the current snapshot
        const job = JSON.parse(frame.data) as Job;
        if (frame.id !== undefined) lastEventId = frame.id;
        last = job;
        options.onProgress?.(job);
        if (isTerminal(job.status)) return job;
      }
    } catch (err) {
      if (signal?.aborted) throw err;
    }
    // The stream ended without a terminal snapshot (server restart, dropped connection): resume.
    if (last && isTerminal(last.status)) return last;
    await sleep(backoffDelay(attempt++, 100, 2000), signal);
  }
}

function fetchStream(transport: Transport, jobId: string, lastEventId: string | undefined, signal: AbortSignal | undefined): Promise<Response> {
  const headers = transport.headers({ accept: 'text/event-stream', ...(lastEventId !== undefined ? { 'last-event-id': lastEventId } : {}) });
  return transport.rawFetch(transport.url(`/v1/jobs/${encodeURIComponent(jobId)}/stream`), { headers, signal: signal ?? null });
}

async function pollJob(transport: Transport, jobId: string, options: WaitOptions, signal: AbortSignal | undefined): Promise<Job> {
  const min = options.pollMinMs ?? 250;
  const max = options.pollMaxMs ?? 5000;
  let lastVersion: number | undefined;
  for (let attempt = 0; ; attempt++) {
    const job = await getJob(transport, jobId, signal);
    if (job.version !== lastVersion) {
      lastVersion = job.version;
      options.onProgress?.(job);
    }
    if (isTerminal(job.status)) return job;
    await sleep(Math.min(max, backoffDelay(Math.min(attempt, 10), min, max)), signal);
  }
}
