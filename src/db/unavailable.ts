/**
 * Is a failure the database being unreachable (a PostgreSQL restart, failover, a full connection
 * table, a network cut), as opposed to a fault of the statement or of this code? Such failures are
 * answered 503 UNAVAILABLE with Retry-After (http/error-handler.ts), never 500; the workers keep
 * what they hold and try again (worker/, webhooks/delivery-worker.ts).
 *
 * Recognised: SQLSTATE class 08 (connection exception), 57P01/57P02/57P03 (the server shuts down,
 * crashed, or is starting up), 53300 (too many connections); socket errors of the driver
 * (ECONNREFUSED, ECONNRESET …); node-postgres's own messages for a connection that ended, broke or
 * could not be had within the pool's timeout. Causes are followed (`cause`, AggregateError).
 */

const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENETDOWN', 'EAI_AGAIN', 'ENOTFOUND']);
const SERVER_CODES = new Set(['57P01', '57P02', '57P03', '53300']);
const DRIVER_MESSAGES = [
  'Connection terminated',
  'is not queryable',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Connection ended unexpectedly',
];

/** Seconds a client is asked to wait (Retry-After) when the database is unreachable. */
export const DATABASE_RETRY_AFTER_S = 2;

export function isDatabaseUnavailable(err: unknown, depth = 0): boolean {
  if (depth > 5 || typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && (SOCKET_CODES.has(e.code) || SERVER_CODES.has(e.code) || /^08[0-9A-Z]{3}$/.test(e.code))) return true;
  if (typeof e.message === 'string' && DRIVER_MESSAGES.some((m) => (e.message as string).includes(m))) return true;
  if (Array.isArray(e.errors) && e.errors.some((inner) => isDatabaseUnavailable(inner, depth + 1))) return true;
  return isDatabaseUnavailable(e.cause, depth + 1);
}

export interface RetryOptions {
  /** Give up (rethrow the last failure) once this many ms have passed since the first try. */
  withinMs: number;
  /** Stop retrying when this signal aborts. */
  signal?: AbortSignal;
  /** Called before each wait (for a log line). */
  onRetry?(err: unknown, attempt: number): void;
  /** First wait; doubled up to 2 s. */
  baseMs?: number;
}

/**
 * Runs `fn` again while it fails because the database is unreachable, with a growing pause, for at
 * most `withinMs`; any other failure, or the last one, is thrown. Only for work whose repetition is
 * safe even when a failed try did commit (a write conditional on a lease token, whose caller
 * re-reads the row when the repetition finds nothing to change).
 */
export async function retryWhileUnavailable<T>(fn: () => Promise<T>, options: RetryOptions): Promise<T> {
  const start = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const pause = Math.min(2_000, (options.baseMs ?? 200) * 2 ** (attempt - 1));
      if (!isDatabaseUnavailable(err) || options.signal?.aborted || Date.now() - start + pause > options.withinMs) throw err;
      options.onRetry?.(err, attempt);
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
