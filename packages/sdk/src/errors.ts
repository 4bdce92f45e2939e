/**
 * The SDK's errors. Every error it throws is a `WorkspaceAutomationError`; a refusal of the
 * service is a `ServiceError` carrying the service's error envelope (code, status, requestId,
 * details) and its Retry-After in seconds.
 */

/** Base class of every error this package throws. */
export class WorkspaceAutomationError extends Error {
  override name = 'WorkspaceAutomationError';
}

/** Error codes the service documents (decisions.md section 3); others may be added later. */
export type ServiceErrorCode =
  | 'INVALID_REQUEST'
  | 'INVALID_INPUT'
  | 'UNKNOWN_OPERATION'
  | 'IDEMPOTENCY_KEY_REQUIRED'
  | 'INVALID_CURSOR'
  | 'WEBHOOK_URL_REJECTED'
  | 'UNSUPPORTED_MEDIA'
  | 'OPERATION_UNAVAILABLE'
  | 'DOMAIN_NOT_VERIFIED'
  | 'UNAUTHENTICATED'
  | 'INSUFFICIENT_CREDITS'
  | 'FORBIDDEN_SCOPE'
  | 'FORBIDDEN_WORKSPACE'
  | 'FORBIDDEN_OPERATION'
  | 'FORBIDDEN_TRANSPORT'
  | 'FORBIDDEN_IP'
  | 'PLAN_REQUIRED'
  | 'KEY_SUSPENDED'
  | 'NOT_FOUND'
  | 'IDEMPOTENCY_CONFLICT'
  | 'IDEMPOTENCY_IN_PROGRESS'
  | 'OUTPUT_CHANGED'
  | 'PERSONAL_PROVIDER_KEY'
  | 'JOB_NOT_RETRYABLE'
  | 'JOB_NOT_CANCELLABLE'
  | 'WEBHOOK_REVOKED'
  | 'REPLAY_LIMIT_REACHED'
  | 'DELIVERY_NOT_FAILED'
  | 'CURSOR_EXPIRED'
  | 'PAYLOAD_TOO_LARGE'
  | 'RATE_LIMITED'
  | 'CONCURRENCY_LIMITED'
  | 'BUDGET_EXCEEDED'
  | 'QUEUE_FULL'
  | 'UNAVAILABLE'
  | (string & {});

/** The service answered with an error envelope `{success: false, code, message, requestId, details?}`. */
export class ServiceError extends WorkspaceAutomationError {
  override name = 'ServiceError';
  readonly code: ServiceErrorCode;
  readonly status: number;
  /** The `requestId` of the body, else the `X-Request-Id` header. */
  readonly requestId: string | undefined;
  readonly details: Record<string, unknown> | undefined;
  /** Retry-After in seconds, when the response carried one. */
  readonly retryAfter: number | undefined;

  constructor(init: { code: string; message: string; status: number; requestId?: string | undefined; details?: Record<string, unknown> | undefined; retryAfter?: number | undefined }) {
    super(`${init.code} (${init.status}): ${init.message}`);
    this.code = init.code;
    this.status = init.status;
    this.requestId = init.requestId;
    this.details = init.details;
    this.retryAfter = init.retryAfter;
  }
}

/** The request never got an HTTP response (connection refused or reset, DNS, TLS), after any retries. */
export class ConnectionError extends WorkspaceAutomationError {
  override name = 'ConnectionError';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

/** A complete output or an upload did not verify (offsets, total size or SHA-256). */
export class IntegrityError extends WorkspaceAutomationError {
  override name = 'IntegrityError';
  constructor(
    message: string,
    readonly expected?: string | number,
    readonly actual?: string | number,
  ) {
    super(message);
  }
}

/** A job did not reach a terminal status in time (jobs.wait with `timeoutMs`). */
export class WaitTimeoutError extends WorkspaceAutomationError {
  override name = 'WaitTimeoutError';
}

/** Why a webhook request was refused by verifyWebhook. */
export type WebhookVerificationReason = 'MISSING_SIGNATURE' | 'MALFORMED_SIGNATURE' | 'TIMESTAMP_OUT_OF_TOLERANCE' | 'SIGNATURE_MISMATCH' | 'INVALID_BODY';

/** verifyWebhook refused a request: answer it with 400 (or 401) and do not process it. */
export class WebhookVerificationError extends WorkspaceAutomationError {
  override name = 'WebhookVerificationError';
  constructor(
    readonly reason: WebhookVerificationReason,
    message: string,
  ) {
    super(message);
  }
}
