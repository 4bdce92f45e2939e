/**
 * How an MCP tool call reaches its REST route: the MCP endpoint replays the call as an in-process
 * request (Fastify inject) to the route, so scopes, validation, usage points and errors are the
 * route's own. The request carries this header with a secret drawn at start-up; the auth hook
 * then checks the key for the `mcp` transport instead of `rest`. The secret never leaves the
 * process, so a client cannot claim the transport with the header.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { safeEqual } from '../lib/crypto.js';

export const MCP_INTERNAL_HEADER = 'x-mcp-internal';

const secret = randomBytes(32).toString('base64url');

export function internalMcpHeaders(): Record<string, string> {
  return { [MCP_INTERNAL_HEADER]: secret };
}

/** True for a request replayed by the MCP endpoint of this process. */
export function isInternalMcpRequest(value: string | string[] | undefined): boolean {
  return typeof value === 'string' && safeEqual(value, secret);
}

/**
 * Synchronous runs an MCP tool call is following (for progress): the call registers a watcher
 * and sends its token in this header with the replayed request; the runs route hands the job id
 * to the watcher once the run is admitted (only for a request that also carries the internal
 * header, so a client cannot reach another call's watcher). Process-local, like the replay.
 */
export const MCP_RUN_WATCH_HEADER = 'x-mcp-run-watch';

interface RunWatcher {
  onJob: (jobId: string) => void;
  /** The reply's text as it is generated (a streamed chat run). */
  onText?: (delta: string) => void;
}

const runWatchers = new Map<string, RunWatcher>();

export function watchRun(onJob: (jobId: string) => void, onText?: (delta: string) => void): { headers: Record<string, string>; stop(): void } {
  const token = randomBytes(16).toString('base64url');
  runWatchers.set(token, onText ? { onJob, onText } : { onJob });
  return { headers: { [MCP_RUN_WATCH_HEADER]: token }, stop: () => runWatchers.delete(token) };
}

/** The watcher of a replayed run request, if the MCP call that sent it follows its job. */
function runWatcherOf(headers: Record<string, string | string[] | undefined>): RunWatcher | undefined {
  if (!isInternalMcpRequest(headers[MCP_INTERNAL_HEADER])) return undefined;
  const token = headers[MCP_RUN_WATCH_HEADER];
  return typeof token === 'string' ? runWatchers.get(token) : undefined;
}

/**
 * The seam through which a route hands the job id of a synchronous run to whoever follows it,
 * without depending on the MCP transport: `request.onSynchronousJob` (declared with the other
 * request fields in http/auth-hook.ts) is a getter this transport decorates every request with.
 * It finds the watcher of a replayed MCP call by the headers above (never for a request without
 * this process's internal secret), and is undefined otherwise. A getter costs nothing on requests
 * that never read it.
 */
export function decorateSynchronousJobObserver(app: FastifyInstance): void {
  app.decorateRequest('onSynchronousJob', {
    getter(this: FastifyRequest) {
      return runWatcherOf(this.headers)?.onJob;
    },
  });
  app.decorateRequest('onSynchronousText', {
    getter(this: FastifyRequest) {
      return runWatcherOf(this.headers)?.onText;
    },
  });
}

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * Beside onSynchronousJob: the MCP call's receiver of the reply's text as the run generates it
     * (a chat.generate call with a progressToken; mcp/reply-text.ts), undefined otherwise.
     */
    readonly onSynchronousText: ((delta: string) => void) | undefined;
  }
}
