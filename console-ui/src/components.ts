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
