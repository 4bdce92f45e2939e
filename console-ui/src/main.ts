/**
 * The owners' console (issue 35): the shell (navigation, workspace choice, the "Test mode"
 * switch, "Sign out") and a small router over paths under /console/. State is what
 * /console/api/me answers; nothing is made up. The test-mode switch (issue 34) lives in the
 * address (`?mode=test`, mode.ts), which every navigation link keeps; while it is on, the shell
 * says so on every page (a banner and the bar's colour) and the Run, Jobs, Media and Webhooks
 * pages show and act on the workspace's test objects only.
 */
import { render } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken, type KeyMode, type Me } from './api.js';
import { ErrorNotice } from './components.js';
import { html } from './html.js';
import { consoleHref, modeFromLocation } from './mode.js';
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

/** The page's path and the mode of its address, both followed through Back and Forward. */
function usePath(): [string, KeyMode, (to: string) => void, (mode: KeyMode) => void] {
  const [path, setPath] = useState(() => window.location.pathname);
  const [mode, setModeState] = useState<KeyMode>(() => modeFromLocation());
  useEffect(() => {
    const onPop = () => {
      setPath(window.location.pathname);
      setModeState(modeFromLocation());
    };
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return [
    path,
    mode,
    (to: string) => {
      window.history.pushState(null, '', to);
      setPath(new URL(to, window.location.href).pathname);
      setModeState(modeFromLocation());
    },
    (next: KeyMode) => {
      // The same page in the other mode; an object of one mode (an open job) is not shown in the other.
      const params = new URLSearchParams(window.location.search);
      params.delete('job');
      params.delete('mode');
      window.history.pushState(null, '', consoleHref(window.location.pathname, next, Object.fromEntries(params)));
      setModeState(next);
    },
  ];
}

/** The test-mode switch of the shell: a labelled checkbox with the switch role. */
function ModeSwitch({ mode, onChange }: { mode: KeyMode; onChange: (mode: KeyMode) => void }) {
  return html`<div class=${`mode-switch${mode === 'test' ? ' on' : ''}`}>
    <input type="checkbox" role="switch" id="test-mode-switch" checked=${mode === 'test'} aria-describedby="test-mode-hint"
      onChange=${(e: Event) => onChange((e.currentTarget as HTMLInputElement).checked ? 'test' : 'live')} />
    <label for="test-mode-switch">Test mode</label>
    <span id="test-mode-hint" class="visually-hidden">Shows and runs the workspace's test keys, jobs, media and webhooks: simulated work paid from the test balance.</span>
  </div>`;
}

/** Said on every page while test mode is on. */
function TestModeBanner() {
  return html`<div class="test-banner" role="region" aria-label="Test mode">
    <strong>Test mode</strong> · You are viewing test data. Runs use test keys, are simulated and are paid from the test balance: no live credits are spent and no provider is called.
  </div>`;
}

function App() {
  const [path, mode, navigate, setMode] = usePath();
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
    html`<li key=${to}><a href=${consoleHref(`/console/${to}`, mode)} aria-current=${page === to ? 'page' : undefined} onClick=${(e: MouseEvent) => {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
      e.preventDefault();
      navigate(consoleHref(`/console/${to}`, mode));
    }}>${label}</a></li>`;
  // The pages of one workspace in one mode: another workspace or mode starts them afresh.
  const pageKey = `${workspace?.id ?? ''}:${mode}`;

  return html`<a class="skip" href="#main">Skip to content</a>
    <header class=${`bar${mode === 'test' ? ' test' : ''}`}>
      <span class="brand">Console</span>
      <nav aria-label="Console"><ul>${NAV.map(([to, label]) => link(to, label))}</ul></nav>
      <div class="who">
        ${me.workspaces.length > 0
          ? html`<label for="workspace-choice">Workspace</label>
              <select id="workspace-choice" value=${workspaceId} onChange=${(e: Event) => setWorkspaceId((e.currentTarget as HTMLSelectElement).value)}>
                ${me.workspaces.map((w) => html`<option key=${w.id} value=${w.id}>${w.name} (${w.role})</option>`)}
              </select>`
          : null}
        <${ModeSwitch} mode=${mode} onChange=${setMode} />
        <span class="user">${me.user.email}</span>
        <button type="button" onClick=${signOut}>Sign out</button>
      </div>
    </header>
    ${mode === 'test' ? html`<${TestModeBanner} />` : null}
    <main id="main">
      <${ErrorNotice} error=${error} />
      ${page === '' ? html`<${WorkspacesPage} me=${me} />` : null}
      ${page === 'keys' ? html`<${KeysPage} me=${me} workspace=${workspace} />` : null}
      ${page === 'run' ? html`<${RunPage} key=${pageKey} workspace=${workspace} mode=${mode} />` : null}
      ${page === 'jobs' ? html`<${JobsPage} key=${pageKey} me=${me} workspace=${workspace} mode=${mode} />` : null}
      ${page === 'usage' ? html`<${UsagePage} key=${pageKey} workspace=${workspace} mode=${mode} />` : null}
      ${page === 'media' ? html`<${MediaPage} key=${pageKey} workspace=${workspace} mode=${mode} />` : null}
      ${page === 'webhooks' ? html`<${WebhooksPage} key=${pageKey} workspace=${workspace} mode=${mode} />` : null}
      ${(NOT_YET_PAGES as string[]).includes(page) ? html`<${NotYetPage} page=${page} />` : null}
      ${page !== '' && page !== 'keys' && page !== 'run' && page !== 'jobs' && page !== 'usage' && page !== 'media' && page !== 'webhooks' && !(NOT_YET_PAGES as string[]).includes(page) ? html`<h1>Not found</h1><p>No console page at this address.</p>` : null}
    </main>`;
}

render(html`<${App} />`, document.getElementById('app')!);
