/**
 * The page a sign-in link opens. Opening it changes nothing (mail scanners follow links); only
 * the "Sign in" button spends the link. The token is in the URL's fragment, which browsers never
 * send to a server; it is removed from the address bar once used.
 */
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { ErrorNotice, PageHeading } from '../components.js';
import { html } from '../html.js';

export function tokenFromLocation(): string | undefined {
  const match = /(?:^#|&)token=([A-Za-z0-9_-]+)/.exec(window.location.hash);
  return match?.[1];
}

export function SignInPage({ onSignedIn }: { onSignedIn: () => void }) {
  const [token] = useState(tokenFromLocation);
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  async function submit(event: Event) {
    event.preventDefault();
    if (!token) return;
    setBusy(true);
    setError(undefined);
    try {
      await api.signIn(token);
      window.history.replaceState(null, '', '/console/');
      onSignedIn();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }
  return html`<main id="main" class="narrow">
    <${PageHeading}>Sign in to the console<//>
    ${token
      ? html`<form onSubmit=${submit}>
          <p>This link signs you in once. It expires 15 minutes after it was issued.</p>
          <button type="submit" class="primary" disabled=${busy}>Sign in</button>
        </form>`
      : html`<p>Open the sign-in link the operator gave you. Operators issue one with <code>was users sign-in-link --email YOUR_EMAIL</code>.</p>`}
    <${ErrorNotice} error=${error} />
  </main>`;
}
