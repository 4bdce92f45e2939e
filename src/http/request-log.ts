/**
 * Request logging: one line per finished request (RequestLogController) with the URL redacted
 * (redactUrl) and the tenant ids, and request loggers made real only when something is logged
 * (lazyChildLogger).
 */
import type { Bindings, ChildLoggerOptions, Logger } from 'pino';
import { LogController, type FastifyBaseLogger, type FastifyReply, type FastifyRequest } from 'fastify';

/** Query parameters whose values never reach a log line (a key sent where it does not belong). */
const SECRET_QUERY_PARAMS = new Set(['api_key', 'apikey', 'key', 'access_token', 'token', 'secret']);

/** The URL as logged: values of secret-looking query parameters, and any `wask_` key, replaced. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  // The common case, a path without a query and without a key in it, is logged as it is.
  if (q < 0 && !url.includes('wask_')) return url;
  const path = (q < 0 ? url : url.slice(0, q)).replace(/wask_[A-Za-z0-9_-]+/g, 'wask_[redacted]');
  if (q < 0) return path;
  const params = new URLSearchParams(url.slice(q + 1));
  for (const [name, value] of [...params]) {
    if (SECRET_QUERY_PARAMS.has(name.toLowerCase()) || value.includes('wask_')) params.set(name, '[redacted]');
  }
  return `${path}?${params.toString()}`;
}

/**
 * The matched route pattern of a request (undefined for 404s). `request.routeOptions.url` builds
 * a dozen-property object on every access; this reads the route context Fastify keeps on the
 * request (its 'fastify.context' symbol) and falls back to routeOptions if that ever changes.
 */
let routeContextKey: symbol | null | undefined;
function routePattern(request: FastifyRequest): string | undefined {
  if (routeContextKey === undefined) routeContextKey = Object.getOwnPropertySymbols(request).find((s) => s.description === 'fastify.context') ?? null;
  if (routeContextKey === null) return request.routeOptions.url;
  return (request as unknown as Record<symbol, { config?: { url?: string } } | undefined>)[routeContextKey]?.config?.url;
}

type LogLevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace';
type LogArgs = [unknown, ...unknown[]];

/**
 * A request's logger, made into a real pino child (which serializes its bindings) only when
 * something is logged at an enabled level: most requests never log, and the child cost a few
 * microseconds on every request.
 */
class LazyChildLogger {
  private real: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger & { isLevelEnabled?: (level: string) => boolean },
    private readonly bindings: Bindings,
  ) {}

  private logger(): FastifyBaseLogger {
    return (this.real ??= this.parent.child(this.bindings));
  }

  private write(level: LogLevelName, args: LogArgs): void {
    if (!this.real && this.parent.isLevelEnabled && !this.parent.isLevelEnabled(level)) return;
    (this.logger()[level] as (...a: unknown[]) => void)(...args);
  }

  get level(): string {
    return this.real ? this.real.level : this.parent.level;
  }

  set level(level: string) {
    this.logger().level = level;
  }

  isLevelEnabled(level: string): boolean {
    return this.real ? (this.real as { isLevelEnabled?: (l: string) => boolean }).isLevelEnabled?.(level) ?? true : this.parent.isLevelEnabled?.(level) ?? true;
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.write('error', args);
  }
  warn(...args: LogArgs): void {
    this.write('warn', args);
  }
  info(...args: LogArgs): void {
    this.write('info', args);
  }
  debug(...args: LogArgs): void {
    this.write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.write('trace', args);
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options);
  }
}

export function lazyChildLogger(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  // Route-level log levels or serializers need the real child at once.
  if (options.level !== undefined || options.serializers !== undefined) return logger.child(bindings, options);
  return new LazyChildLogger(logger, bindings) as unknown as FastifyBaseLogger;
}

/**
 * Fastify's request logging (Fastify 5.12 moved it from `disableRequestLogging` to a
 * LogController). One line per finished request instead of two, with a redacted URL and the
 * tenant ids, so a log line can be traced to a workspace and key but never carries a secret.
 */
export class RequestLogController extends LogController {
  constructor(
    options: ConstructorParameters<typeof LogController>[0],
    /** The service logger (with its redaction paths): `request errored` lines. */
    private readonly log: Logger,
    /** Where `request completed` lines go (lib/logging.ts: the service logger without redaction paths). */
    private readonly requestLog: Logger,
    /** Called for every finished response (Fastify calls requestCompleted for each one) with its route pattern. */
    private readonly finished: (request: FastifyRequest, reply: FastifyReply, route: string) => void,
  ) {
    super(options);
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const route = routePattern(request) ?? 'unmatched';
    this.finished(request, reply, route);
    if (this.isLogDisabled(request)) return;
    if (error) {
      // Rare, and an error may carry anything: through the redacting logger.
      if (this.log.isLevelEnabled('error')) this.log.error({ ...this.line(request, reply, route), err: error }, 'request errored');
      return;
    }
    // The request id is a field of the line rather than the binding of a child logger: no
    // child per request, and the line is serialized once.
    if (this.requestLog.isLevelEnabled('info')) this.requestLog.info(this.line(request, reply, route), 'request completed');
  }

  private line(request: FastifyRequest, reply: FastifyReply, route: string) {
    const auth = request.auth;
    return {
      requestId: request.id,
      method: request.method,
      route,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTimeMs: Math.round(reply.elapsedTime * 10) / 10,
      ...(auth ? { workspaceId: auth.workspace.id, keyId: auth.key.id } : {}),
    };
  }

  override routeNotFound(): void {}
}

