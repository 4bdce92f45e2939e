/**
 * What a client should do about a failed job or a refused request, by its code: the advice the
 * MCP results carry beside the error code (issue 18), written once here so every transport that
 * wants it says the same. Unknown codes (a provider's own, a simulated `[sim:fail=CODE]`) get the
 * cautious default: retrying may help.
 */
export type NextAction = 'retry' | 'wait_and_retry' | 'change_input' | 'add_credits' | 'raise_budget' | 'ask_operator' | 'use_new_idempotency_key' | 'none';

export interface NextStep {
  errorCode: string;
  action: NextAction;
  advice: string;
}

const RETRY_JOB = 'Retry the failed job (service_jobs_retry, or POST /v1/jobs/{id}/retry); completed steps are not charged again.';

const JOB_FAILURES: Record<string, [NextAction, string]> = {
  PROVIDER_TIMEOUT: ['retry', `The provider did not answer in time. ${RETRY_JOB}`],
  PROVIDER_ERROR: ['retry', `The provider failed or answered something unusable. ${RETRY_JOB}`],
  PROVIDER_RATE_LIMITED: ['wait_and_retry', `The provider is rate limiting this deployment. Wait a minute, then: ${RETRY_JOB}`],
  PROVIDER_REJECTED: ['change_input', 'The provider refused the input (invalid for it, or against its content policy). Change the input and run again; retrying the same input fails again.'],
  PROVIDER_AUTH: ['ask_operator', 'The provider refused the credentials (the operator’s or the workspace’s own provider key). Ask the operator or the workspace owner to fix the provider key; retrying will not help until then.'],
  MEDIA_UNREADABLE: ['change_input', 'A media input could not be read as the operation needs. Upload a valid file and run again with its media id.'],
  MEDIA_TOO_LARGE: ['change_input', 'A media input or result is too large. Use a smaller input.'],
  OUTPUT_TOO_LARGE: ['change_input', 'The result would exceed the size bound. Ask for less (fewer frames, shorter duration).'],
  LINK_UNREACHABLE: ['change_input', 'The page could not be reached. Check the URL.'],
  LINK_BLOCKED: ['change_input', 'The address is not allowed (private network or blocked). Use a public web address.'],
  LINK_TIMEOUT: ['retry', 'The page did not answer in time. Run again later.'],
  LINK_HTTP_ERROR: ['change_input', 'The page answered with an HTTP error. Check the URL.'],
  LINK_TOO_MANY_REDIRECTS: ['change_input', 'The page redirects too often. Use its final address.'],
  LINK_TOO_LARGE: ['change_input', 'The page is too large to preview.'],
  SCAN_TARGET_UNREACHABLE: ['change_input', 'The site could not be reached. Check the URL and that the site is up.'],
  SCAN_TARGET_TIMEOUT: ['retry', 'The site did not answer in time. Retry the job later.'],
  SCAN_TARGET_BLOCKED: ['change_input', 'The site resolves to an address that is not allowed. Use a public HTTPS site.'],
  SCAN_RESPONSE_TOO_LARGE: ['change_input', 'The site answered with more than a scan reads.'],
  EDIT_PLAN_INVALID: ['change_input', 'The chat model’s plan of the video.edit prompt broke the edit rules, so nothing was run (its chat usage was charged). Say more precisely what to do, or give `edits` instead; retrying asks the model again.'],
  VOICE_DELETED: ['change_input', 'The workspace voice the job speaks with was deleted after the job was admitted (nothing was charged). Run again with another voiceId (GET /v1/voices, service_voices_list) or none.'],
  STORAGE_FULL: ['ask_operator', `The service’s storage was full, so the job’s files or result could not be stored (the part not stored is not charged). Ask the operator to free space, then: ${RETRY_JOB}`],
};

const REFUSALS: Record<string, [NextAction, string]> = {
  INSUFFICIENT_CREDITS: ['add_credits', 'The workspace’s spendable credits do not cover the maximum cost. Add credits (ask the workspace owner), or ask for less (service_estimates_create quotes an input).'],
  BUDGET_EXCEEDED: ['raise_budget', 'A key or workspace budget does not allow this now. Wait for the reset named in details, or ask the owner to raise the budget.'],
  RATE_LIMITED: ['wait_and_retry', 'Usage points are used up for now. Wait Retry-After seconds, then call again with the same idempotencyKey.'],
  CONCURRENCY_LIMITED: ['wait_and_retry', 'Too many at once. Wait Retry-After seconds and call again.'],
  QUEUE_FULL: ['wait_and_retry', 'The workspace has as many waiting jobs as its plan allows. Wait for some to finish, then call again.'],
  INVALID_INPUT: ['change_input', 'The input does not fit the operation’s schema; details.errors points at each problem. Fix them and call again.'],
  UNKNOWN_OPERATION: ['change_input', 'No such operation; service_tools_list names the operations this key may run.'],
  OPERATION_UNAVAILABLE: ['ask_operator', 'This deployment does not offer the operation.'],
  FORBIDDEN_OPERATION: ['ask_operator', 'This API key may not run the operation; ask its owner for a key that may.'],
  UNSUPPORTED_MEDIA: ['change_input', 'A media input is missing from the workspace or of a kind the operation does not take.'],
  DOMAIN_NOT_VERIFIED: ['ask_operator', 'The site’s domain must be verified in the workspace before it can be scanned.'],
  IDEMPOTENCY_CONFLICT: ['use_new_idempotency_key', 'This idempotencyKey was used for a different request. Use a new key for a new request.'],
  IDEMPOTENCY_IN_PROGRESS: ['wait_and_retry', 'The first call with this idempotencyKey is still running. Call again with the same key in a moment (or look it up with service_runs_lookup).'],
  JOB_NOT_RETRYABLE: ['none', 'Only failed queued jobs can be retried.'],
  STORAGE_FULL: ['ask_operator', 'The service’s storage is full and nothing was stored. Ask the operator to free space, then call again (with the same idempotencyKey for a run).'],
  PERSONAL_PROVIDER_KEY: ['none', 'Jobs funded by the workspace’s own provider key cannot be retried publicly; run the operation again instead.'],
};

/** What to do about a failed job's errorCode. */
export function nextStepForJobFailure(errorCode: string): NextStep {
  const [action, advice] = JOB_FAILURES[errorCode] ?? ['retry', `The job failed with ${errorCode}. ${RETRY_JOB} If it fails the same way again, change the input.`];
  return { errorCode, action, advice };
}

/** What to do about a refused request, for the codes where there is something to do. */
export function nextStepForRefusal(code: string): NextStep | undefined {
  const entry = REFUSALS[code];
  return entry ? { errorCode: code, action: entry[0], advice: entry[1] } : undefined;
}
