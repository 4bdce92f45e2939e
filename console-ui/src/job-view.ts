/**
 * One job, live: its snapshot polled every second until it ends (status, progress, cost, origin),
 * "Cancel" while it waits or runs and "Retry" once it failed (the public API's services, rules and
 * error codes), then its complete output read through the verified output path with previews:
 * images, an audio player, a video player, text, a GLB as a download, sprite atlases and frames.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiKey, KeyMode } from './api.js';
import { ErrorNotice, formatTime } from './components.js';
import { html } from './html.js';
import { formatMillicents, newIdempotencyKey, readCompleteOutput, runsApi, usableKeys, type CompleteOutput, type JobSnapshot } from './runs-api.js';

const POLL_MS = 1000;
const isActive = (status: string) => status === 'pending' || status === 'processing';

export interface JobViewProps {
  workspaceId: string;
  jobId: string;
  /** The job's mode (the shell's switch): a test job is read, cancelled and retried in test mode, with test keys. */
  mode: KeyMode;
  /** The workspace's keys, to retry with (owners and admins); undefined for a member. */
  keys: ApiKey[] | undefined;
  canManage: boolean;
  /** Called when the job changes through this view (cancelled, retried). */
  onChanged?: () => void;
  /** Move the keyboard focus to the job's heading once it shows (the user just opened it). */
  focus?: boolean;
}

export function JobView({ workspaceId, jobId, mode, keys, canManage, onChanged, focus }: JobViewProps) {
  const [job, setJob] = useState<JobSnapshot | undefined>();
  const [error, setError] = useState<unknown>();
  const [actionError, setActionError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const [poke, setPoke] = useState(0);
  const busyRef = useRef(false);
  const heading = useRef<HTMLHeadingElement>(null);
  const shown = job !== undefined;
  useEffect(() => {
    if (shown && focus) heading.current?.focus();
  }, [shown]);

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    async function tick() {
      try {
        const next = await runsApi.job(workspaceId, jobId, mode);
        if (stopped) return;
        setJob(next);
        setError(undefined);
        if (isActive(next.status)) timer = setTimeout(tick, POLL_MS);
      } catch (err) {
        if (stopped) return;
        setError(err);
        timer = setTimeout(tick, POLL_MS * 3);
      }
    }
    void tick();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [workspaceId, jobId, mode, poke]);

  async function act(what: () => Promise<unknown>) {
    if (busyRef.current) return;
    busyRef.current = true;
    setBusy(true);
    setActionError(undefined);
    try {
      await what();
      setPoke((n) => n + 1);
      onChanged?.();
    } catch (err) {
      setActionError(err);
    } finally {
      busyRef.current = false;
      setBusy(false);
    }
  }

  if (!job) return html`<section class="job" aria-label="Job"><${ErrorNotice} error=${error} />${error ? null : html`<p aria-live="polite">Loading job…</p>`}</section>`;

  return html`<section class="job" aria-labelledby=${`job-${job.id}`} data-job-id=${job.id} data-status=${job.status}>
    <h2 id=${`job-${job.id}`} tabindex="-1" ref=${heading}>${job.livemode ? 'Job' : html`<span class="badge test">Test</span> Test job`} <code>${job.id}</code></h2>
    <dl class="facts">
      <dt>Operation</dt><dd>${job.operationId}</dd>
      <dt>Status</dt><dd class=${`status ${job.status}`}><span role="status">${job.status}</span>${job.errorCode ? html` (<code>${job.errorCode}</code>)` : null}</dd>
      <dt>Progress</dt><dd><progress max="100" value=${job.progress.percentage} aria-label="Progress">${job.progress.percentage}%</progress> ${job.progress.percentage}%</dd>
      <dt>Cost</dt><dd>${formatMillicents(job.costMillicents)} of at most ${formatMillicents(job.maximumCostMillicents)}</dd>
      <dt>Origin</dt><dd>${job.executionOrigin ?? 'not recorded'}</dd>
      <dt>Created</dt><dd>${formatTime(job.createdAt)}</dd>
      <dt>Started</dt><dd>${formatTime(job.startedAt)}</dd>
      <dt>Finished</dt><dd>${formatTime(job.completedAt)}</dd>
    </dl>
    <${ErrorNotice} error=${error} />
    ${canManage && isActive(job.status)
      ? html`<p><button type="button" class="danger" disabled=${busy} onClick=${() => act(() => runsApi.cancel(workspaceId, job.id, mode))}>Cancel</button></p>`
      : null}
    ${canManage && job.status === 'failed' ? html`<${RetryForm} workspaceId=${workspaceId} mode=${mode} job=${job} keys=${keys ?? []} busy=${busy} onRetry=${act} />` : null}
    <${ErrorNotice} error=${actionError} />
    ${job.status === 'completed' ? html`<${JobOutput} key=${`${job.id}:${job.version}`} workspaceId=${workspaceId} mode=${mode} jobId=${job.id} />` : null}
  </section>`;
}

function RetryForm({ workspaceId, mode, job, keys, busy, onRetry }: { workspaceId: string; mode: KeyMode; job: JobSnapshot; keys: ApiKey[]; busy: boolean; onRetry: (what: () => Promise<unknown>) => void }) {
  const usable = usableKeys(keys, 'jobs:write', mode).filter((k) => k.operations.includes(job.operationId));
  const [chosen, setChosen] = useState<string | undefined>();
  // The keys may arrive after the form first shows: the first usable one until one is chosen.
  const keyId = usable.find((k) => k.id === chosen)?.id ?? usable[0]?.id ?? '';
  // One Idempotency-Key per failed attempt shown: pressing "Retry" twice retries once.
  const [idem] = useState(newIdempotencyKey);
  if (usable.length === 0) {
    return html`<p class="notice">To retry, a ${mode === 'test' ? 'test' : 'live'} key of this workspace needs the scope <code>jobs:write</code> and the operation <code>${job.operationId}</code>; create or edit one on the Keys page.</p>`;
  }
  return html`<form class="inline" onSubmit=${(e: Event) => {
    e.preventDefault();
    onRetry(() => runsApi.retry(workspaceId, job.id, mode, keyId, idem));
  }}>
    <label for=${`retry-key-${job.id}`}>Retry with key</label>
    <select id=${`retry-key-${job.id}`} value=${keyId} onChange=${(e: Event) => setChosen((e.currentTarget as HTMLSelectElement).value)}>
      ${usable.map((k) => html`<option key=${k.id} value=${k.id}>${k.prefix}…</option>`)}
    </select>
    <button type="submit" class="primary" disabled=${busy}>Retry</button>
  </form>`;
}

function JobOutput({ workspaceId, mode, jobId }: { workspaceId: string; mode: KeyMode; jobId: string }) {
  const [output, setOutput] = useState<CompleteOutput | undefined>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    let stopped = false;
    readCompleteOutput(workspaceId, jobId, mode).then(
      (o) => !stopped && setOutput(o),
      (err) => !stopped && setError(err),
    );
    return () => {
      stopped = true;
    };
  }, [workspaceId, jobId, mode]);
  if (error) return html`<${ErrorNotice} error=${error} />`;
  if (!output) return html`<p aria-live="polite">Reading the complete output…</p>`;
  return html`<section class="output" aria-labelledby=${`output-${jobId}`}>
    <h3 id=${`output-${jobId}`}>Result</h3>
    <p class="verified">${output.totalBytes.toLocaleString('en-US')} bytes, SHA-256 <code>${output.sha256.slice(0, 16)}…</code>
      ${output.verified ? ' verified.' : ' (not verified: this browser offers no SubtleCrypto on plain http).'}</p>
    <${Previews} value=${output.value} />
    <details>
      <summary>Complete output (JSON)</summary>
      <pre class="json">${JSON.stringify(output.value, null, 2)}</pre>
    </details>
  </section>`;
}

interface FileRef {
  path: string;
  mediaId: string;
  name: string;
  mimeType: string;
  url: string;
  sizeBytes?: number;
}

/** Files (objects naming a media id, a MIME type and a URL) and text leaves of the output, with their paths. */
function collect(value: unknown, path: string, files: FileRef[], texts: { path: string; text: string }[]): void {
  if (Array.isArray(value)) {
    value.forEach((v, i) => collect(v, `${path}[${i}]`, files, texts));
    return;
  }
  if (value && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    if (typeof o.mediaId === 'string' && typeof o.mimeType === 'string' && typeof o.url === 'string') {
      files.push({ path, mediaId: o.mediaId, name: typeof o.name === 'string' ? o.name : o.mediaId, mimeType: o.mimeType, url: o.url, ...(typeof o.sizeBytes === 'number' ? { sizeBytes: o.sizeBytes } : {}) });
      return;
    }
    for (const [k, v] of Object.entries(o)) collect(v, path ? `${path}.${k}` : k, files, texts);
    return;
  }
  if (typeof value === 'string' && value !== '') texts.push({ path, text: value });
  else if (typeof value === 'number' || typeof value === 'boolean') texts.push({ path, text: String(value) });
}

/**
 * Signed http(s) URLs are embedded: the service's own origin with the local store, the bucket's
 * with S3 (the page's Content-Security-Policy allows exactly those); anything else is only a link.
 */
const embeddable = (url: string) => {
  try {
    return ['http:', 'https:'].includes(new URL(url, window.location.href).protocol);
  } catch {
    return false;
  }
};

function FilePreview({ file }: { file: FileRef }) {
  const label = `${file.path}: ${file.name}`;
  const embed = embeddable(file.url);
  const download = html`<a href=${file.url} download=${file.name} rel="noopener">Download ${file.name}</a>`;
  let preview: unknown = null;
  if (embed && file.mimeType.startsWith('image/')) preview = html`<img src=${file.url} alt=${label} loading="lazy" />`;
  else if (embed && file.mimeType.startsWith('audio/')) preview = html`<audio controls preload="metadata" src=${file.url} aria-label=${label}></audio>`;
  else if (embed && file.mimeType.startsWith('video/')) preview = html`<video controls preload="metadata" src=${file.url} aria-label=${label}></video>`;
  const kind = file.mimeType === 'model/gltf-binary' || file.name.toLowerCase().endsWith('.glb') ? '3D model (GLB)' : file.mimeType;
  return html`<figure class="file" data-mime=${file.mimeType}>
    ${preview}
    <figcaption><strong>${file.path}</strong> · ${kind}${file.sizeBytes !== undefined ? ` · ${file.sizeBytes.toLocaleString('en-US')} bytes` : ''} · ${download}</figcaption>
  </figure>`;
}

function Previews({ value }: { value: unknown }) {
  const files: FileRef[] = [];
  const texts: { path: string; text: string }[] = [];
  collect(value, '', files, texts);
  // A sprite's atlas first, then its strips, then its frames as a grid.
  const frames = files.filter((f) => /^frames\[\d+\]$/.test(f.path));
  const others = files.filter((f) => !frames.includes(f));
  return html`
    ${others.length ? html`<div class="files">${others.map((f) => html`<${FilePreview} key=${f.path} file=${f} />`)}</div>` : null}
    ${frames.length
      ? html`<details class="frames" open=${frames.length <= 16}>
          <summary>${frames.length} frames</summary>
          <div class="frame-grid">${frames.map((f) => html`<${FilePreview} key=${f.path} file=${f} />`)}</div>
        </details>`
      : null}
    ${texts.length
      ? html`<table class="text-output">
          <caption>Text and values</caption>
          <thead><tr><th scope="col">Field</th><th scope="col">Value</th></tr></thead>
          <tbody>${texts.map((t) => html`<tr key=${t.path}><th scope="row"><code>${t.path}</code></th><td>${t.text.length > 80 || t.text.includes('\n') ? html`<pre>${t.text}</pre>` : t.text}</td></tr>`)}</tbody>
        </table>`
      : null}`;
}
