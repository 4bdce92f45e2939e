/**
 * Jobs: the workspace's jobs, newest first, refreshed every two seconds (status, progress, cost,
 * origin), filtered by status and operation, paged; "Open" shows one job live with its complete
 * output and files, "Cancel" and "Retry" (owners and admins). /console/jobs?job=ID opens that job.
 * The shell's test-mode switch chooses the mode: live jobs, or (test mode) the test jobs only.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiKey, type KeyMode, type Me, type Workspace } from '../api.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';
import { JobView } from '../job-view.js';
import { consoleHref } from '../mode.js';
import { formatMillicents, JOB_STATUSES, runsApi, type JobMetadata } from '../runs-api.js';

const REFRESH_MS = 2000;

function jobFromLocation(): string | undefined {
  const id = new URLSearchParams(window.location.search).get('job');
  return id && /^[0-9a-f-]{36}$/i.test(id) ? id : undefined;
}

export function JobsPage({ me, workspace, mode }: { me: Me; workspace: Workspace | undefined; mode: KeyMode }) {
  const [status, setStatus] = useState('');
  const [operationId, setOperationId] = useState('');
  // The cursors of the pages before the one shown (the first page has none).
  const [cursors, setCursors] = useState<string[]>([]);
  const [page, setPage] = useState<JobsPageData | undefined>();
  const [updatedAt, setUpdatedAt] = useState<string>('');
  const [error, setError] = useState<unknown>();
  const [selected, setSelected] = useState<string | undefined>(jobFromLocation);
  const [keys, setKeys] = useState<ApiKey[] | undefined>();
  const [poke, setPoke] = useState(0);
  const cursor = cursors[cursors.length - 1];

  useEffect(() => {
    setKeys(undefined);
    if (workspace?.canManageKeys) api.listKeys(workspace.id).then((r) => setKeys(r.items), () => setKeys([]));
  }, [workspace?.id]);

  useRefreshedJobs(workspace?.id, mode, { status, operationId, cursor, poke }, { setPage, setError, setUpdatedAt });

  if (!workspace) return html`<${PageHeading}>Jobs<//><p>You have no workspace yet.</p>`;

  function filterChanged(set: (v: string) => void) {
    return (e: Event) => {
      set((e.currentTarget as HTMLSelectElement).value);
      setCursors([]);
      setPage(undefined);
    };
  }

  function open(id: string | undefined) {
    setSelected(id);
    const url = consoleHref('/console/jobs', mode, { job: id });
    window.history.replaceState(null, '', url);
  }

  return html`<${PageHeading}>Jobs<//>
    <p>${mode === 'test' ? html`<span class="badge test">Test</span> Test jobs` : 'Jobs'} of <strong>${workspace.name}</strong>, started from the API, MCP or this console${mode === 'test' ? ' with test keys: simulated, paid from the test balance' : ''}. The list refreshes every two seconds.</p>
    ${selected
      ? html`<div class="job-detail">
          <p><button type="button" onClick=${() => open(undefined)}>Close job</button></p>
          <${JobView} key=${selected} workspaceId=${workspace.id} mode=${mode} jobId=${selected} keys=${keys} canManage=${workspace.canManageKeys} focus=${true} onChanged=${() => setPoke((n) => n + 1)} />
        </div>`
      : null}
    <form class="filters" onSubmit=${(e: Event) => e.preventDefault()} aria-label="Filter jobs">
      <label for="filter-status">Status</label>
      <select id="filter-status" value=${status} onChange=${filterChanged(setStatus)}>
        <option value="">Any status</option>
        ${JOB_STATUSES.map((s) => html`<option key=${s} value=${s}>${s}</option>`)}
      </select>
      <label for="filter-operation">Operation</label>
      <select id="filter-operation" value=${operationId} onChange=${filterChanged(setOperationId)}>
        <option value="">Any operation</option>
        ${me.keyOptions.operations.map((op) => html`<option key=${op} value=${op}>${op}</option>`)}
      </select>
      <span class="muted">${updatedAt ? `Updated ${updatedAt}` : ''}</span>
    </form>
    <${ErrorNotice} error=${error} />
    <${JobsTable} page=${page} mode=${mode} failed=${!!error} filtered=${!!(status || operationId)} pageNumber=${cursors.length + 1} selected=${selected} onOpen=${open} />
    <p class="pager">
      ${cursors.length ? html`<button type="button" onClick=${() => setCursors((c) => c.slice(0, -1))}>Newer jobs</button>` : null}
      ${page?.nextCursor ? html`<button type="button" onClick=${() => setCursors((c) => [...c, page.nextCursor!])}>Older jobs</button>` : null}
    </p>`;
}

/**
 * The jobs page shown, read again every REFRESH_MS while the tab is visible (and at once when
 * the workspace, a filter, the page or `poke` changes).
 */
function useRefreshedJobs(
  workspaceId: string | undefined,
  mode: KeyMode,
  query: { status: string; operationId: string; cursor: string | undefined; poke: number },
  set: { setPage: (p: JobsPageData) => void; setError: (e: unknown) => void; setUpdatedAt: (t: string) => void },
) {
  const { status, operationId, cursor, poke } = query;
  useEffect(() => {
    if (!workspaceId) return;
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function refresh() {
      if (document.visibilityState !== 'hidden') {
        try {
          const next = await runsApi.jobs(workspaceId!, mode, { status, operationId, ...(cursor ? { cursor } : {}) });
          if (stopped) return;
          set.setPage(next);
          set.setError(undefined);
          set.setUpdatedAt(new Date().toLocaleTimeString());
        } catch (err) {
          if (stopped) return;
          set.setError(err);
        }
      }
      if (!stopped) timer = setTimeout(refresh, REFRESH_MS);
    }
    void refresh();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [workspaceId, mode, status, operationId, cursor, poke]);
}

type JobsPageData = { items: JobMetadata[]; nextCursor: string | null };

function JobsTable({ page, mode, failed, filtered, pageNumber, selected, onOpen }: { page: JobsPageData | undefined; mode: KeyMode; failed: boolean; filtered: boolean; pageNumber: number; selected: string | undefined; onOpen: (id: string) => void }) {
  if (!page) return failed ? null : html`<p aria-live="polite">Loading jobs…</p>`;
  if (page.items.length === 0) return html`<p>No ${mode === 'test' ? 'test ' : ''}jobs${filtered ? ' match these filters' : ' yet'}.</p>`;
  return html`<table class="jobs">
    <caption>${mode === 'test' ? 'Test jobs' : 'Jobs'}, newest first${pageNumber > 1 ? ` (page ${pageNumber})` : ''}</caption>
    <thead><tr><th scope="col">Created</th><th scope="col">Operation</th><th scope="col">Status</th><th scope="col">Progress</th><th scope="col">Cost</th><th scope="col">Origin</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
      ${page.items.map(
        (j) => html`<tr key=${j.id} data-job-id=${j.id} data-status=${j.status} data-livemode=${String(j.livemode)} aria-current=${selected === j.id ? 'true' : undefined}>
          <td>${formatTime(j.createdAt)}</td>
          <th scope="row">${j.operationId}</th>
          <td class=${`status ${j.status}`}>${j.status}${j.errorCode ? html` <code>${j.errorCode}</code>` : null}</td>
          <td>${j.progress.percentage}%</td>
          <td>${formatMillicents(j.costMillicents)}</td>
          <td>${j.executionOrigin ?? '—'}</td>
          <td><button type="button" aria-label=${`Open job ${j.operationId} ${j.id}`} onClick=${() => onOpen(j.id)}>Open</button></td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}
