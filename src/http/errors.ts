/**
 * One error model: services throw `AppError(code)`; this registry maps every code to its HTTP
 * status and public message (decisions.md section 3). Unknown errors become 500 INTERNAL with no
 * detail in the body.
 */
export const ERROR_REGISTRY = {
  INVALID_REQUEST: [400, 'The request is malformed.'],
  INVALID_INPUT: [400, 'The operation input does not satisfy its schema.'],
  UNKNOWN_OPERATION: [400, 'Unknown operationId.'],
  OPERATION_UNAVAILABLE: [400, 'This deployment does not offer the operation (no provider is configured for it).'],
  IDEMPOTENCY_KEY_REQUIRED: [400, 'An Idempotency-Key header (1 to 128 characters) is required.'],
  INVALID_CURSOR: [400, 'The cursor is not valid for this list.'],
  WEBHOOK_URL_REJECTED: [400, 'The webhook URL is not permitted.'],
  UNSUPPORTED_MEDIA: [400, 'The uploaded content is not a supported media type.'],
  DOMAIN_NOT_VERIFIED: [400, 'The domain could not be verified.'],
  UNAUTHENTICATED: [401, 'A valid API key is required in the Authorization header.'],
  INSUFFICIENT_CREDITS: [402, 'Spendable credits do not cover the maximum cost of this operation.'],
  FORBIDDEN_SCOPE: [403, 'The API key lacks the scope this endpoint needs.'],
  FORBIDDEN_WORKSPACE: [403, 'The API key may not use this workspace.'],
  FORBIDDEN_OPERATION: [403, 'The API key may not run this operation.'],
  FORBIDDEN_TRANSPORT: [403, 'The API key is not enabled for this transport.'],
  FORBIDDEN_IP: [403, 'Requests from this address are not allowed for this API key.'],
  FORBIDDEN_ORIGIN: [403, 'Requests from this browser origin are not allowed (MCP_ALLOWED_ORIGINS).'],
  TEST_MODE_ONLY: [403, 'This endpoint is for test keys only (wask_test_…); a live key cannot use it.'],
  PLAN_REQUIRED: [403, "The workspace's plan does not include this feature."],
  KEY_SUSPENDED: [403, 'The API key is temporarily suspended after repeated abuse.'],
  FORBIDDEN: [403, 'Not allowed.'],
  NOT_FOUND: [404, 'Not found.'],
  CONFLICT: [409, 'The request conflicts with the current state.'],
  IDEMPOTENCY_CONFLICT: [409, 'The Idempotency-Key was already used with a different request.'],
  IDEMPOTENCY_IN_PROGRESS: [409, 'A request with this Idempotency-Key is still in progress.'],
  JOB_NOT_CANCELLABLE: [409, 'The job has already finished and cannot be cancelled.'],
  JOB_NOT_RETRYABLE: [409, 'The job cannot be retried.'],
  PERSONAL_PROVIDER_KEY: [409, 'Jobs funded by a personal provider key cannot be retried through the public API.'],
  OUTPUT_CHANGED: [409, 'The output changed since the cursor was issued; restart without a cursor.'],
  WEBHOOK_REVOKED: [409, 'The webhook is revoked.'],
  WEBHOOK_LIMIT_REACHED: [409, 'The workspace has the most active webhooks allowed; revoke one first.'],
  REPLAY_LIMIT_REACHED: [409, 'This event has reached its replay limit.'],
  DELIVERY_NOT_FAILED: [409, 'Only failed deliveries can be replayed.'],
  WEBHOOK_DISABLED: [409, 'The webhook is disabled; enable it before replaying its deliveries.'],
  ACTIVE_KEY_LIMIT: [409, "The workspace's plan allows no more active keys."],
  CURSOR_EXPIRED: [410, 'The cursor expired; restart without a cursor.'],
  PAYLOAD_TOO_LARGE: [413, 'The request body is too large.'],
  STORAGE_QUOTA_EXCEEDED: [413, "The upload would exceed the workspace's media storage quota."],
  RANGE_NOT_SATISFIABLE: [416, 'The requested range is not satisfiable.'],
  RATE_LIMITED: [429, 'Usage point limit reached.'],
  CONCURRENCY_LIMITED: [429, 'Concurrency limit reached.'],
  BUDGET_EXCEEDED: [429, 'A budget ceiling does not permit this operation.'],
  QUEUE_FULL: [429, 'The waiting-jobs limit of the workspace is reached.'],
  INTERNAL: [500, 'Internal error.'],
  UNAVAILABLE: [503, 'Temporarily unavailable.'],
  STORAGE_FULL: [507, "The server's storage is full; nothing was stored. Retry once the operator has freed space."],
} as const satisfies Record<string, readonly [number, string]>;

export type ErrorCode = keyof typeof ERROR_REGISTRY;

export interface AppErrorOptions {
  message?: string;
  details?: Record<string, unknown>;
  /** Seconds; sent as Retry-After. */
  retryAfter?: number;
  headers?: Record<string, string>;
  /**
   * Another status than the registry's, only where the shared spec fixes one for this use of the
   * code: the admin credit adjustment's 409 INSUFFICIENT_CREDITS (decisions.md section 6; the
   * public API's is 402). See EXTRA_STATUSES.
   */
  status?: number;
}

/** Statuses a code may have beside its registered one, each fixed by the shared spec. */
export const EXTRA_STATUSES: Partial<Record<ErrorCode, readonly number[]>> = { INSUFFICIENT_CREDITS: [409] };

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;
  readonly retryAfter: number | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(code: ErrorCode, options: AppErrorOptions = {}) {
    const [status, message] = ERROR_REGISTRY[code];
    // Expected refusals (4xx) are answers, not faults: skip capturing a stack trace, which is
    // a measurable part of the cost of a 401 or 429.
    const limit = Error.stackTraceLimit;
    if (status < 500) Error.stackTraceLimit = 0;
    super(options.message ?? message);
    Error.stackTraceLimit = limit;
    this.name = 'AppError';
    this.code = code;
    this.status = options.status !== undefined && EXTRA_STATUSES[code]?.includes(options.status) ? options.status : status;
    this.details = options.details;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers;
  }
}

export function isAppError(err: unknown): err is AppError {
  return err instanceof AppError;
}

/** Codes that mean "an authenticated key asked for something it may not have" (suspension input). */
export const AUTHORIZATION_FAILURE_CODES: ReadonlySet<ErrorCode> = new Set([
  'FORBIDDEN_SCOPE',
  'FORBIDDEN_WORKSPACE',
  'FORBIDDEN_OPERATION',
  'FORBIDDEN_TRANSPORT',
]);
