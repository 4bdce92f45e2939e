/**
 * Turns every failure into the error envelope `{success:false, code, message, requestId, details?}`
 * with the documented status. Fastify's own errors (validation, bad JSON, body too large) are
 * mapped to our codes; the database being unreachable is 503 UNAVAILABLE with Retry-After
 * (db/unavailable.ts); storage that is full is 507 STORAGE_FULL (lib/storage-full.ts); anything
 * else unexpected is logged and answered 500 without detail.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERROR_REGISTRY, isAppError, type ErrorCode } from './errors.js';
import { DATABASE_RETRY_AFTER_S, isDatabaseUnavailable } from '../db/unavailable.js';
import { fullStorageOf, type FullStorage } from '../lib/storage-full.js';

export interface ErrorBody {
  success: false;
  code: ErrorCode;
  message: string;
  requestId: string;
  details?: Record<string, unknown>;
}

export function errorBody(request: FastifyRequest, code: ErrorCode, message: string, details?: Record<string, unknown>): ErrorBody {
  // Built property by property: a conditional spread is a slow object-literal path on every 4xx.
  const body: ErrorBody = { success: false, code, message, requestId: String(request.id) };
  if (details) body.details = details;
  return body;
}

export function sendAppError(request: FastifyRequest, reply: FastifyReply, err: AppError): FastifyReply {
  if (err.status === 429) request.tooManyRequests = err;
  if (err.retryAfter !== undefined) reply.header('Retry-After', String(err.retryAfter));
  const headers = err.headers;
  if (headers) for (const name in headers) reply.header(name, headers[name]);
  return reply.status(err.status).send(errorBody(request, err.code, err.message, err.details));
}

/**
 * The refusal of a JSON body holding a "__proto__" key, or a "constructor" key with "prototype"
 * (keys that could reach an object's prototype): well-formed JSON, refused whole.
 */
export function prototypeKeyRefusal(): AppError {
  return new AppError('INVALID_REQUEST', {
    message: 'The body holds a "__proto__" key, or a "constructor" key with "prototype", which is refused.',
    details: { errors: [{ in: 'body', pointer: '/', message: 'must not hold the keys "__proto__" or "constructor.prototype"' }] },
  });
}

/** The answer while the database cannot be reached (docs/operations.md, "PostgreSQL outage"). */
export function databaseUnavailable(): AppError {
  return new AppError('UNAVAILABLE', {
    message: 'The database cannot be reached right now; retry after the Retry-After delay.',
    retryAfter: DATABASE_RETRY_AFTER_S,
    details: { reason: 'DATABASE_UNAVAILABLE' },
  });
}

/**
 * The answer when the server's storage is full (docs/operations.md, "A full disk"): the media
 * files' file system (ENOSPC, EDQUOT) or the database (SQLITE_FULL, PostgreSQL's disk_full). The
 * request wrote nothing (a failed write transaction is rolled back whole; staged and half-written
 * files are removed), so the same request may be sent again once space is freed.
 */
export function storageFull(storage: FullStorage): AppError {
  return new AppError('STORAGE_FULL', {
    message:
      storage === 'files'
        ? "The server's media storage is full; nothing was stored. Retry once the operator has freed space."
        : "The server's database storage is full; nothing was stored. Retry once the operator has freed space.",
    details: { storage },
  });
}

function fromFastifyError(err: FastifyError): AppError | undefined {
  if (err.validation) {
    const where = err.validationContext ?? 'request';
    return new AppError('INVALID_REQUEST', {
      message: `Invalid ${where}: ${err.validation.map((v) => `${v.instancePath || '/'} ${v.message ?? ''}`.trim()).join('; ')}`,
      details: { errors: err.validation.map((v) => ({ in: where, pointer: v.instancePath || '/', message: v.message ?? 'invalid' })) },
    });
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_REQUEST', { message: 'The body is not valid JSON.' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('INVALID_REQUEST', { message: 'Unsupported or malformed Content-Type for this endpoint.' });
  }
  const status = err.statusCode ?? 500;
  if (status === 413) return new AppError('PAYLOAD_TOO_LARGE');
  if (status === 404) return new AppError('NOT_FOUND');
  if (status >= 400 && status < 500) return new AppError('INVALID_REQUEST', { message: 'The request is malformed.' });
  return undefined;
}

export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appError = isAppError(err) ? err : fromFastifyError(err as FastifyError);
  if (appError) {
    // A deliberate INTERNAL still deserves a log line; 4xx and 503 are expected outcomes.
    if (appError.code === 'INTERNAL') request.log.error({ err, method: request.method, route: request.routeOptions.url }, 'internal error');
    return sendAppError(request, reply, appError);
  }
  // The database unreachable (a PostgreSQL restart, failover, no free connection in time): an
  // outage the client outlasts by retrying, answered 503 UNAVAILABLE with Retry-After, not a fault.
  if (isDatabaseUnavailable(err)) {
    request.log.warn({ err: { message: err.message, code: (err as { code?: unknown }).code }, method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'database unavailable');
    return sendAppError(request, reply, databaseUnavailable());
  }
  // The disk (or the database's) full: the operator must free space; logged once per refusal so
  // the log shows it beside the 507s (docs/operations.md, "A full disk").
  const full = fullStorageOf(err);
  if (full) {
    request.log.error({ err: { message: err.message, code: (err as { code?: unknown }).code }, storage: full, method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'storage full');
    return sendAppError(request, reply, storageFull(full));
  }
  // The request's child logger carries requestId, so the log line and the 500 body can be matched;
  // the body never carries the internal message.
  request.log.error({ err, method: request.method, route: request.routeOptions.url ?? 'unmatched' }, 'unhandled error');
  return reply.status(500).send(errorBody(request, 'INTERNAL', ERROR_REGISTRY.INTERNAL[1]));
}
