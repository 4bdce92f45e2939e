/** Small shared pieces: the refusal notice, the page heading. */
import { useEffect, useRef } from 'preact/hooks';
import { ApiError } from './api.js';
import { html } from './html.js';

/** A refusal as the API gave it: its code and message, and what to do next when that is known. */
export function ErrorNotice({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : new ApiError(0, 'CLIENT_ERROR', error instanceof Error ? error.message : String(error));
  return html`<div class="notice error" role="alert">
    <p><strong class="code">${e.code}</strong> ${e.message}</p>
    ${nextStep(e) ? html`<p class="next">${nextStep(e)}</p>` : null}
    ${e.requestId ? html`<p class="request-id">Request id: <code>${e.requestId}</code></p>` : null}
  </div>`;
}

function nextStep(e: ApiError): string | undefined {
  switch (e.code) {
    case 'UNAUTHENTICATED':
      // A key the console acts with (Run, Retry) that is revoked or expired: the message says what to do.
      if ((e.details as { keyId?: string } | undefined)?.keyId) return undefined;
      return 'Ask the operator for a new sign-in link (was users sign-in-link --email YOUR_EMAIL).';
    case 'FORBIDDEN':
      return 'Ask an owner or admin of the workspace.';
    case 'FORBIDDEN_ORIGIN':
      return 'Open the console at the service address the operator configured (PUBLIC_BASE_URL).';
    case 'RATE_LIMITED':
      return 'Wait a moment, then try again.';
    case 'ACTIVE_KEY_LIMIT':
      return 'Revoke a key you no longer use, or ask the operator for a larger plan.';
    case 'INVALID_REQUEST':
      return 'Correct the form and submit it again.';
    case 'UNSUPPORTED_MEDIA':
      return 'Upload a file of an accepted type (the Media page lists them) whose content matches its declared type.';
    case 'PAYLOAD_TOO_LARGE':
      return 'Upload a smaller file, or ask the operator for a larger plan.';
    case 'STORAGE_QUOTA_EXCEEDED':
      return 'Free space in the workspace, or ask the operator for a larger plan.';
    case 'DOMAIN_NOT_VERIFIED':
      return 'Publish the verification token as shown (DNS changes can take a while to appear), then check again.';
    case 'WEBHOOK_URL_REJECTED':
      return 'Use an HTTPS URL on a hostname verified in this workspace (see Domains) that resolves to public addresses.';
    case 'WEBHOOK_LIMIT_REACHED':
      return 'Revoke a webhook you no longer use.';
    case 'WEBHOOK_REVOKED':
      return 'Revocation is permanent: create a new webhook.';
    case 'WEBHOOK_DISABLED':
      return 'Enable the webhook first (POST /v1/webhooks/{id}/update), then replay.';
    case 'DELIVERY_NOT_FAILED':
      return 'Refresh the deliveries: only a failed delivery can be replayed.';
    case 'REPLAY_LIMIT_REACHED':
      return 'This event was replayed as often as allowed; fix the receiver and wait for new events.';
    case 'INVALID_INPUT':
      return 'Correct the fields marked below (each refusal names its field), then estimate again.';
    case 'INSUFFICIENT_CREDITS':
      return 'The workspace’s spendable credits are below the maximum cost: ask the operator for credits, or wait for running jobs to release their reservations.';
    case 'BUDGET_EXCEEDED':
      return 'A budget of the key or workspace would be exceeded: raise the key’s budget on the Keys page, choose another key, or wait for the period to reset.';
    case 'QUEUE_FULL':
      return 'Too many jobs are waiting in this workspace: wait for some to finish, then try again.';
    case 'FORBIDDEN_OPERATION':
      return 'The key may not run this operation: choose another key, or add the operation on the Keys page (Edit).';
    case 'FORBIDDEN_SCOPE':
      return 'The key lacks the scope this needs (tools:run to run, jobs:write to retry): choose another key, or add the scope on the Keys page (Edit).';
    case 'FORBIDDEN_TRANSPORT':
      return 'The console acts with a key over REST: choose a key that allows the rest transport.';
    case 'FORBIDDEN_IP':
      return 'The key’s IP ranges do not include this browser’s address: choose another key, or edit its IP ranges.';
    case 'KEY_SUSPENDED':
      return 'The key is suspended after repeated refusals; wait until the time given, or use another key.';
    case 'OPERATION_UNAVAILABLE':
      return 'This service offers no provider for the operation; ask the operator.';
    case 'JOB_NOT_CANCELLABLE':
      return 'The job has already finished; nothing is left to cancel.';
    case 'JOB_NOT_RETRYABLE':
      return 'Only a failed queued job can be retried; run the operation again from the Run page instead.';
    case 'PERSONAL_PROVIDER_KEY':
      return 'A job paid by the workspace’s own provider key is not retried; run it again from the Run page.';
    case 'IDEMPOTENCY_CONFLICT':
      return 'This form was already used for another request; change the input and estimate again for a new one.';
    case 'IDEMPOTENCY_IN_PROGRESS':
      return 'The first submission of this form is still running; wait a moment.';
    case 'OUTPUT_CHANGED':
    case 'OUTPUT_UNVERIFIED':
    case 'OUTPUT_INCOMPLETE':
      return 'Open the job again to read its output afresh.';
    default:
      return undefined;
  }
}

/** The page's heading, focused when the page changes so screen readers announce it. */
export function PageHeading({ children }: { children: unknown }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return html`<h1 tabindex="-1" ref=${ref}>${children}</h1>`;
}

export const formatTime = (iso: string | null) => (iso ? new Date(iso).toISOString().replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC') : '—');
