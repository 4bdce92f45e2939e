/**
 * runs.stream: a run whose reply streams as it is generated (chat.generate). The request prefers
 * `text/event-stream` and still accepts JSON, so any operation can be asked: a streamed run yields
 * a `delta` event per piece of the reply's text, in order, then one `result` event with the
 * envelope the JSON answer would have been (`data` is runs.create's answer) and the job snapshot;
 * an operation that does not stream answers JSON, given as the `result` event alone (its job read
 * once). Refusals are thrown as ServiceError before anything is yielded, and an `event: error`
 * frame of a stream that already started is thrown the same way.
 *
 * The request is sent with an Idempotency-Key and retried like runs.create until the answer
 * starts; a stream cut after that is not resumed (ConnectionError): the service has stopped the
 * run, cancelled its job and charged what was consumed. Breaking out of the loop (or aborting
 * `signal`) closes the connection, which stops the run the same way.
 */
import { ConnectionError, ServiceError } from './errors.js';
import { readSse } from './sse.js';
import type { Transport } from './transport.js';
import type { Job, OperationId, OperationInput, RunResponse } from './types.js';

export interface RunStreamOptions {
  /** 1 to 128 characters; default: a new random UUID. Reuse it only for the same request. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

/** A piece of the reply's text, as the provider generated it. */
export interface RunDeltaEvent {
  type: 'delta';
  text: string;
}

/** The end of the run: the JSON answer's envelope and the job as GET /v1/jobs/{jobId} gives it. */
export interface RunResultEvent<Op extends OperationId = OperationId> {
  type: 'result';
  code: string;
  message: string;
  data: RunResponse<Op>;
  job: Job;
}

export type RunStreamEvent<Op extends OperationId = OperationId> = RunDeltaEvent | RunResultEvent<Op>;

export async function* streamRun<Op extends OperationId>(transport: Transport, operationId: Op, input: OperationInput<Op>, o: RunStreamOptions = {}): AsyncGenerator<RunStreamEvent<Op>> {
  const res = await transport.send({
    method: 'POST',
    path: '/v1/runs',
    json: { operationId, input },
    headers: { accept: 'text/event-stream, application/json;q=0.5', 'idempotency-key': o.idempotencyKey ?? globalThis.crypto.randomUUID() },
    signal: o.signal,
    retry: true,
  });
  if (!/^text\/event-stream/i.test(res.headers.get('content-type') ?? '')) {
    const envelope = (await res.json()) as { code: string; message: string; data: RunResponse<Op> };
    const job = (await transport.json<Job>({ method: 'GET', path: `/v1/jobs/${encodeURIComponent(envelope.data.jobId)}`, signal: o.signal, retry: true })).data;
    yield { type: 'result', code: envelope.code, message: envelope.message, data: envelope.data, job };
    return;
  }
  for await (const frame of readSse(res.body!)) {
    if (frame.event === 'delta') yield { type: 'delta', text: (JSON.parse(frame.data) as { text: string }).text };
    else if (frame.event === 'result') {
      const end = JSON.parse(frame.data) as { code: string; message: string; data: RunResponse<Op>; job: Job };
      yield { type: 'result', code: end.code, message: end.message, data: end.data, job: end.job };
      return;
    } else if (frame.event === 'error') {
      const body = JSON.parse(frame.data) as { code: string; message: string; requestId?: string; details?: Record<string, unknown> };
      throw new ServiceError({ code: body.code, message: body.message, status: res.status, requestId: body.requestId, details: body.details });
    }
  }
  throw new ConnectionError(`POST /v1/runs: the stream of ${operationId} ended before its result`);
}
