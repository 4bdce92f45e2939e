/**
 * POST /v1/runs answered as server-sent events: a chat.generate run whose request prefers
 * `text/event-stream` to JSON (docs/decisions.md "Streamed chat runs").
 *
 * Every refusal before admission is the usual JSON error (nothing is streamed yet). Once the run is
 * admitted the response becomes the stream: `event: delta` frames, `data: {"text": …}`, as the
 * provider generates the reply (their texts join into the result's `message.content`), then one
 * `event: result` frame whose data is the envelope the JSON answer would have been (`success`,
 * `code`, `message`, `data`) plus `job`, the job snapshot as GET /v1/jobs/{id} gives it, and the
 * response ends. A failure after the stream started (the database) is an `event: error` frame with
 * the error body instead. `: keep-alive` comments are sent while the provider is silent.
 *
 * A client that closes the connection before the result stops the run (RunRequest.clientGone): the
 * provider call is aborted and the job is cancelled, charged what the provider had consumed. A
 * replayed Idempotency-Key streams the stored answer: its text as one delta, then the result.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Deps } from '../../deps.js';
import { databaseUnavailable, errorBody, storageFull } from '../../http/error-handler.js';
import { ERROR_REGISTRY, isAppError } from '../../http/errors.js';
import { isDatabaseUnavailable } from '../../db/unavailable.js';
import { secondsUntil } from '../../lib/periods.js';
import { fullStorageOf } from '../../lib/storage-full.js';
import type { AuthContext } from '../auth/types.js';
import { getJob } from '../jobs/service.js';
import { SseWriter } from '../jobs/stream-writer.js';
import { resolveLimits } from '../usage/plans.js';
import { startRun, type RunRequest, type RunResponse } from './service.js';

/** Operations whose runs stream their reply. */
export const STREAMED_OPERATIONS: ReadonlySet<string> = new Set(['chat.generate']);

/**
 * How a run request's Accept header ranks the two answers: `stream` when it names
 * `text/event-stream` with a quality above the one JSON gets (from the most specific of
 * application/json, application/*, * / *; RFC 9110 section 12.5.1), `json` when JSON is
 * acceptable at all (a missing header accepts everything). JSON stays the default: a tie is JSON.
 */
export function runAnswerModes(accept: string | string[] | undefined): { stream: boolean; json: boolean } {
  const value = Array.isArray(accept) ? accept.join(',') : accept;
  if (!value || value.trim() === '') return { stream: false, json: true };
  let sse = 0;
  let jsonSpecificity = -1;
  let json = 0;
  for (const range of value.split(',')) {
    const [type = '', ...params] = range.split(';').map((p) => p.trim().toLowerCase());
    const q = params.find((p) => p.startsWith('q='));
    const weight = q === undefined ? 1 : Number(q.slice(2));
    const quality = Number.isFinite(weight) ? Math.max(0, Math.min(1, weight)) : 0;
    if (type === 'text/event-stream') sse = Math.max(sse, quality);
    const specificity = type === 'application/json' ? 2 : type === 'application/*' ? 1 : type === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < jsonSpecificity) continue;
    json = specificity > jsonSpecificity ? quality : Math.max(json, quality);
    jsonSpecificity = specificity;
  }
  return { stream: sse > 0 && sse > json, json: json > 0 };
}

/** The envelope message of a run's answer: a synchronous operation that failed or was cancelled says so. */
export function runMessage(run: { statusCode: number; body: Record<string, unknown> }): string {
  if (run.statusCode === 202) return 'Job queued.';
  if (run.body.status === 'cancelled') return 'Operation cancelled: the client closed the connection before the reply was complete.';
  return run.body.status === 'failed' ? 'Operation failed; see errorCode.' : 'Operation completed.';
}

/** Answers the run as a stream (see the header); `base` is the run request without the stream's hooks. */
export async function streamRun(deps: Deps, request: FastifyRequest, reply: FastifyReply, auth: AuthContext, base: RunRequest): Promise<FastifyReply> {
  const writer = new SseWriter(reply.raw, deps.streamSettings.maxBufferedBytes);
  const gone = new AbortController();
  let keepAlive: NodeJS.Timeout | undefined;
  let textSent = false;
  let opened = false;
  const open = () => {
    if (opened) return;
    opened = true;
    refreshRateLimit(deps, auth, reply);
    reply.hijack();
    writer.open(reply.getHeaders());
    // The client went away while the run was being admitted: its 'close' came before the listener.
    // (The request itself counts as destroyed once its body was read: the socket tells.)
    if (reply.raw.destroyed || request.raw.socket.destroyed) gone.abort();
    keepAlive = setInterval(() => writer.comment('keep-alive'), deps.streamSettings.keepAliveMs);
  };
  const onClose = () => {
    if (!reply.raw.writableFinished) gone.abort();
  };
  reply.raw.on('close', onClose);
  let run: RunResponse;
  try {
    try {
      run = await startRun(deps, auth, {
        ...base,
        clientGone: gone.signal,
        onSynchronousJob: (jobId) => {
          base.onSynchronousJob?.(jobId);
          open();
        },
        onText: (text) => {
          textSent = true;
          writer.event('delta', undefined, { text });
        },
      });
    } catch (err) {
      // Refused before admission: the usual JSON error, since nothing was streamed.
      if (!opened) throw err;
      writer.event('error', undefined, errorFrame(request, err));
      return reply;
    }
    if (!opened) {
      // A replay of a stored answer: nothing ran here.
      if (run.replayed) reply.header('Idempotent-Replayed', 'true');
      open();
    }
    if (!textSent) sendWholeText(writer, run.body);
    await sendResult(deps, request, writer, auth, run);
  } finally {
    clearInterval(keepAlive);
    reply.raw.off('close', onClose);
    writer.end();
  }
  return reply;
}

/** The reply's text as one delta, when none was streamed (a replay, an adapter that cannot stream). */
function sendWholeText(writer: SseWriter, body: Record<string, unknown>): void {
  const result = body.result as { message?: { content?: unknown } } | null | undefined;
  const text = result?.message?.content;
  if (body.status === 'completed' && typeof text === 'string' && text.length > 0) writer.event('delta', undefined, { text });
}

/** The final frame: the JSON answer's envelope and the job snapshot. */
async function sendResult(deps: Deps, request: FastifyRequest, writer: SseWriter, auth: AuthContext, run: RunResponse): Promise<void> {
  if (!writer.writable) return;
  try {
    const job = await getJob(deps, auth.workspace.id, String(run.body.jobId));
    writer.event('result', undefined, { success: true, code: 'PUBLIC_TOOLS_RUN', message: runMessage(run), data: run.body, job });
  } catch (err) {
    writer.event('error', undefined, errorFrame(request, err));
  }
}

/** The error body a JSON answer would have carried for `err` (error-handler.ts), for an `event: error` frame. */
function errorFrame(request: FastifyRequest, err: unknown): unknown {
  const appError = isAppError(err) ? err : isDatabaseUnavailable(err) ? databaseUnavailable() : fullStorageOf(err) ? storageFull(fullStorageOf(err)!) : undefined;
  if (appError) return errorBody(request, appError.code, appError.message, appError.details);
  request.log.error({ err, method: request.method, route: request.routeOptions.url }, 'streamed run failed');
  return errorBody(request, 'INTERNAL', ERROR_REGISTRY.INTERNAL[1]);
}

/** The RateLimit headers after the run's points were charged (the auth hook's onSend does this for JSON answers). */
function refreshRateLimit(deps: Deps, auth: AuthContext, reply: FastifyReply): void {
  const view = deps.usage.peekNow(auth.workspace.id, resolveLimits(auth.workspace));
  if (!view) return;
  const remaining = view.minute.limit - view.minute.used;
  reply.header('RateLimit-Limit', String(view.minute.limit));
  reply.header('RateLimit-Remaining', String(remaining > 0 ? remaining : 0));
  reply.header('RateLimit-Reset', String(secondsUntil(deps.clock.now(), view.minute.resetsAt)));
}
