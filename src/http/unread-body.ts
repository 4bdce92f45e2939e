/**
 * Answers sent before the request body was read reach the client. A refusal can come while the
 * body is still arriving (a wrong multipart part, 413, 401 or 403 before an upload's bytes, a
 * 429): if the server answered and closed at once, the client, still writing, would get EPIPE or
 * ECONNRESET instead of the answer (the kernel resets a socket closed with unread data).
 *
 * So, before such an answer goes out, the rest of the body is read and discarded, up to
 * UNREAD_BODY_LIMIT_BYTES and UNREAD_BODY_LIMIT_MS; the answer then goes out on a connection that
 * stays usable (keep-alive). A body declared larger than the limit, or one that does not end within
 * it, is not waited for: the answer carries `Connection: close`, and the connection is closed after
 * it (a client still sending then sees the connection reset; docs/operations.md says so).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler, RouteOptions } from 'fastify';

/** The most of a refused request's body read and discarded before its answer. */
export const UNREAD_BODY_LIMIT_BYTES = 64 * 1024 * 1024;
/** The longest wait for the rest of a refused request's body. */
export const UNREAD_BODY_LIMIT_MS = 10_000;

/** Reads and discards the rest of the body; true once it ended within the limits, false past them (or when the client went away). */
function discardRest(request: FastifyRequest, limitBytes: number, limitMs: number): Promise<boolean> {
  const raw = request.raw;
  return new Promise((resolve) => {
    let seen = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      raw.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > limitBytes) {
        raw.pause();
        finish(false);
      }
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(raw.complete);
    const timer = setTimeout(() => {
      raw.pause();
      finish(false);
    }, limitMs);
    // Whoever was reading the body (the multipart parser, the JSON body reader) gave up on it.
    raw.unpipe();
    raw.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onClose);
    raw.resume();
  });
}

function closeAfterAnswer(reply: FastifyReply): void {
  reply.header('Connection', 'close');
}

/**
 * The onSend hook of routes that take a body: nothing to do when the body was read (the common
 * case, checked synchronously); otherwise discard the rest first, or close after the answer.
 */
export function unreadBodyHook(limitBytes = UNREAD_BODY_LIMIT_BYTES, limitMs = UNREAD_BODY_LIMIT_MS): onSendHookHandler {
  return (request, reply, payload, done) => {
    const raw = request.raw;
    // `complete`: Node's parser read the whole message. `readableEnded`: whoever read the body
    // reached its end (an injected request, which has no parser, says so only this way).
    if (raw.complete || raw.readableEnded || raw.destroyed) return done(null, payload);
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > limitBytes) {
      closeAfterAnswer(reply);
      return done(null, payload);
    }
    void discardRest(request, limitBytes, limitMs).then((ended) => {
      // Fastify marks a body-parser refusal `Connection: close` because more of the body may
      // follow; once the rest is read, the connection is fit for the next request.
      if (ended) reply.removeHeader('connection');
      else closeAfterAnswer(reply);
      done(null, payload);
    });
  };
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Attaches the hook to every route registered after this call that takes a body. */
export function registerUnreadBodyHook(app: FastifyInstance, hook: onSendHookHandler = unreadBodyHook()): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => BODY_METHODS.has(m))) return;
    route.onSend = route.onSend === undefined ? [hook] : [...[route.onSend].flat(), hook];
  });
}
