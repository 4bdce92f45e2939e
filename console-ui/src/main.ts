/**
 * The owners' console (issue 35): the shell (navigation, workspace choice, "Sign out") and a small
 * router over paths under /console/. State is what /console/api/me answers; nothing is made up.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken, type Me } from './api.js';
import { ErrorNotice } from './components.js';
import { html } from './html.js';
import { JobsPage } from './pages/jobs.js';
import { KeysPage } from './pages/keys.js';
import { MediaPage } from './pages/media.js';
import { NOT_YET_PAGES, NotYetPage } from './pages/not-yet.js';
import { RunPage } from './pages/run.js';
import { SignInPage } from './pages/sign-in.js';
import { UsagePage } from './pages/usage.js';
import { WebhooksPage } from './pages/webhooks.js';
import { WorkspacesPage } from './pages/workspaces.js';

const NAV = [
  ['', 'Workspaces'],
  ['keys', 'Keys'],
  ['run', 'Run'],
  ['jobs', 'Jobs'],
  ['usage', 'Usage'],
  ['media', 'Media'],
  ['webhooks', 'Webhooks'],
] as const;

const pageOf = (path: string) => path.replace(/^\/console\/?/, '').replace(/\/$/, '');

function usePath(): [string, (to: string) => void] {
  const [path, setPath] = useState(() => window.location.pathname);
  useEffect(() => {
    const onPop = () => setPath(window.location.pathname);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return [path, (to: string) => {
    window.history.pushState(null, '', to);
    setPath(to);
  }];
}

function App() {
  const [path, navigate] = usePath();
  const [me, setMe] = useState<Me | undefined>();
  const [error, setError] = useState<unknown>();
  const [workspaceId, setWorkspaceId] = useState<string | undefined>();
  const page = pageOf(path);

  async function loadMe() {
    try {
      const next = await api.me();
      setCsrfToken(next.csrfToken);
      setMe(next);
      setError(undefined);
      setWorkspaceId((current) => (current && next.workspaces.some((w) => w.id === current) ? current : next.workspaces[0]?.id));
    } catch (err) {
      setMe(undefined);
      setError(err);
    }
  }
  useEffect(() => {
    if (page !== 'sign-in') void loadMe();
  }, [page === 'sign-in']);

  if (page === 'sign-in') return html`<${SignInPage} onSignedIn=${() => { navigate('/console/'); void loadMe(); }} />`;
  if (!me) {
    if (!error) return html`<main id="main"><p aria-live="polite">Loading…</p></main>`;
    const signedOut = error instanceof ApiError && error.code === 'UNAUTHENTICATED';
    return html`<main id="main" class="narrow">
      <h1>${signedOut ? 'Not signed in' : 'The console could not load'}</h1>
      <${ErrorNotice} error=${error} />
    </main>`;
  }

  async function signOut() {
    try {
      await api.signOut();
    } catch (err) {
      setError(err);
    }
    setCsrfToken(undefined);
    setMe(undefined);
    setError(new ApiError(401, 'UNAUTHENTICATED', 'You signed out.'));
  }

  const workspace = me.workspaces.find((w) => w.id === workspaceId);
  const link = (to: string, label: string) =>
    html`<li key=${to}><a href=${`/console/${to}`} aria-current=${page === to ? 'page' : undefined} onClick=${(e: MouseEvent) => {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(`/console/${to}`);
    }}>${label}</a></li>`;

  return html`<a class="skip" href="#main">Skip to content</a>
    <header class="bar">
      <span class="brand">Console</span>
      <nav aria-label="Console"><ul>${NAV.map(([to, label]) => link(to, label))}</ul></nav>
      <div class="who">
        ${me.workspaces.length > 0
          ? html`<label for="workspace-choice">Workspace</label>
              <select id="workspace-choice" value=${workspaceId} onChange=${(e: Event) => setWorkspaceId((e.currentTarget as HTMLSelectElement).value)}>
                ${me.workspaces.map((w) => html`<option key=${w.id} value=${w.id}>${w.name} (${w.role})</option>`)}
              </select>`
          : null}
        <span class="user">${me.user.email}</span>
        <button type="button" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    <main id="main">
      <${ErrorNotice} error=${error} />
      ${page === '' ? html`<${WorkspacesPage} me=${me} />` : null}
      ${page === 'keys' ? html`<${KeysPage} me=${me} workspace=${workspace} />` : null}
      ${page === 'run' ? html`<${RunPage} key=${workspace?.id} workspace=${workspace} />` : null}
      ${page === 'jobs' ? html`<${JobsPage} key=${workspace?.id} me=${me} workspace=${workspace} />` : null}
      ${page === 'usage' ? html`<${UsagePage} key=${workspace?.id} workspace=${workspace} />` : null}
      ${page === 'media' ? html`<${MediaPage} workspace=${workspace} />` : null}
      ${page === 'webhooks' ? html`<${WebhooksPage} workspace=${workspace} />` : null}
      ${(NOT_YET_PAGES as string[]).includes(page) ? html`<${NotYetPage} page=${page} />` : null}
      ${page !== '' && page !== 'keys' && page !== 'run' && page !== 'jobs' && page !== 'usage' && page !== 'media' && page !== 'webhooks' && !(NOT_YET_PAGES as string[]).includes(page) ? html`<h1>Not found</h1><p>No console page at this address.</p>` : null}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
