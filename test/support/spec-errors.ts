/**
 * The error codes and statuses of the shared spec, copied by hand from decisions.md (section 3,
 * the 409s "as above" of section 1, section 5's 400s, and the admin credit adjustment's 409 of
 * section 6), and the codes this repository's docs/decisions.md adds to them (STORAGE_FULL),
 * rather than read from src/http/errors.ts, so that a test comparing the two (and every
 * live refusal checked against it) fails when the code drifts from the contract.
 */
export const SPEC_ERROR_STATUSES: Readonly<Record<string, readonly number[]>> = {
  // section 3
  INVALID_REQUEST: [400],
  INVALID_INPUT: [400],
  UNKNOWN_OPERATION: [400],
  IDEMPOTENCY_KEY_REQUIRED: [400],
  INVALID_CURSOR: [400],
  WEBHOOK_URL_REJECTED: [400],
  UNSUPPORTED_MEDIA: [400],
  OPERATION_UNAVAILABLE: [400],
  DOMAIN_NOT_VERIFIED: [400],
  UNAUTHENTICATED: [401],
  // 402 for admission (section 1, "Credits short"); 409 for the admin adjustment (section 6)
  INSUFFICIENT_CREDITS: [402, 409],
  FORBIDDEN_SCOPE: [403],
  FORBIDDEN_WORKSPACE: [403],
  FORBIDDEN_OPERATION: [403],
  FORBIDDEN_TRANSPORT: [403],
  FORBIDDEN_IP: [403],
  PLAN_REQUIRED: [403],
  KEY_SUSPENDED: [403],
  NOT_FOUND: [404],
  OUTPUT_CHANGED: [409],
  PERSONAL_PROVIDER_KEY: [409],
  JOB_NOT_RETRYABLE: [409],
  CURSOR_EXPIRED: [410],
  PAYLOAD_TOO_LARGE: [413],
  RATE_LIMITED: [429],
  CONCURRENCY_LIMITED: [429],
  BUDGET_EXCEEDED: [429],
  QUEUE_FULL: [429],
  UNAVAILABLE: [503],
  // section 1 ("409 as above")
  IDEMPOTENCY_CONFLICT: [409],
  IDEMPOTENCY_IN_PROGRESS: [409],
  JOB_NOT_CANCELLABLE: [409],
  WEBHOOK_REVOKED: [409],
  REPLAY_LIMIT_REACHED: [409],
  DELIVERY_NOT_FAILED: [409],
  // this repository's docs/decisions.md, "HTTP behaviour" (issue 32: a full disk)
  STORAGE_FULL: [507],
  // this repository's docs/decisions.md, "Test mode" (issue 34: test helpers refuse live keys)
  TEST_MODE_ONLY: [403],
};

/** The statuses the spec allows for `code`, or undefined when the spec does not name the code. */
export function specStatusesOf(code: string): readonly number[] | undefined {
  return Object.hasOwn(SPEC_ERROR_STATUSES, code) ? SPEC_ERROR_STATUSES[code] : undefined;
}
