/**
 * A workspace's media library: the list with previews (images, an audio player, a video player),
 * downloads through a fresh signed URL, and uploads by drag and drop or with the file input and
 * "Upload". The server checks every upload exactly as POST /v1/media/upload does (type sniffing,
 * the plan's largest upload, the storage quota); a refusal is shown with its code and message.
 * In test mode (the shell's switch) the page shows and uploads the workspace's test media, which
 * test keys' runs read and write.
 */
import { useEffect, useState } from 'preact/hooks';
import type { KeyMode, Workspace } from '../api.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';
import { mediaApi, type MediaItem, type MediaPage } from './media-api.js';

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * 1024 * 1024) return `${(n / (1024 * 1024)).toFixed(1)} MiB`;
  return `${(n / (1024 * 1024 * 1024)).toFixed(1)} GiB`;
}

export function MediaPage({ workspace, mode }: { workspace: Workspace | undefined; mode: KeyMode }) {
  const [items, setItems] = useState<MediaItem[] | undefined>();
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [limits, setLimits] = useState<Pick<MediaPage, 'maxUploadBytes' | 'acceptedTypes'> | undefined>();
  const [error, setError] = useState<unknown>();

  async function load(id: string) {
    setError(undefined);
    try {
      const page = await mediaApi.list(id, mode);
      setItems(page.items);
      setNextCursor(page.nextCursor);
      setLimits({ maxUploadBytes: page.maxUploadBytes, acceptedTypes: page.acceptedTypes });
    } catch (err) {
      setItems(undefined);
      setError(err);
    }
  }
  async function more(id: string, cursor: string) {
    try {
      const page = await mediaApi.list(id, mode, cursor);
      setItems((current) => [...(current ?? []), ...page.items]);
      setNextCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    }
  }
  useEffect(() => {
    setItems(undefined);
    setNextCursor(null);
    if (workspace) void load(workspace.id);
  }, [workspace?.id, mode]);

  if (!workspace) return html`<${PageHeading}>Media<//><p>You have no workspace yet.</p>`;

  return html`<${PageHeading}>Media<//>
    <p>${mode === 'test' ? html`<span class="badge test">Test</span> Test files` : 'Files'} of <strong>${workspace.name}</strong>, newest first: uploads and the files jobs produced${mode === 'test' ? ' in test mode (test keys see only these)' : ''}.</p>
    ${limits
      ? html`<p>Accepted uploads: ${limits.acceptedTypes.map((t) => t.extension.toUpperCase()).join(', ')}, whose content must match their type; at most ${formatBytes(limits.maxUploadBytes)} each on this workspace's plan.</p>`
      : null}
    <${UploadBox} workspaceId=${workspace.id} mode=${mode} accept=${limits?.acceptedTypes.flatMap((t) => [t.mimeType, `.${t.extension}`]).join(',')} onUploaded=${() => load(workspace.id)} />
    <${ErrorNotice} error=${error} />
    <${MediaTable} items=${items} workspaceId=${workspace.id} mode=${mode} />
    ${nextCursor ? html`<p><button type="button" onClick=${() => more(workspace.id, nextCursor)}>Show older files</button></p>` : null}`;
}

function UploadBox({ workspaceId, mode, accept, onUploaded }: { workspaceId: string; mode: KeyMode; accept: string | undefined; onUploaded: () => Promise<void> }) {
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [status, setStatus] = useState('');
  const [failure, setFailure] = useState<{ name: string; error: unknown } | undefined>();

  async function send(files: File[]) {
    if (files.length === 0) {
      setStatus('Choose a file first.');
      return;
    }
    setBusy(true);
    setFailure(undefined);
    const done: string[] = [];
    for (const file of files) {
      setStatus(`Uploading ${file.name}…`);
      try {
        await mediaApi.upload(workspaceId, file, mode);
        done.push(file.name);
      } catch (error) {
        setFailure({ name: file.name, error });
        break;
      }
    }
    setStatus(done.length > 0 ? `Uploaded ${done.join(', ')}.` : '');
    setBusy(false);
    if (done.length > 0) await onUploaded();
  }

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const input = form.elements.namedItem('file') as HTMLInputElement;
    await send([...(input.files ?? [])]);
    form.reset();
  }

  const onDragOver = (e: DragEvent) => {
    e.preventDefault();
    if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
    setDragging(true);
  };
  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    if (!busy) void send([...(e.dataTransfer?.files ?? [])]);
  };

  return html`<section class="upload" aria-labelledby="upload-heading">
    <h2 id="upload-heading">Upload</h2>
    <div class=${`drop-zone${dragging ? ' dragging' : ''}`} data-testid="drop-zone" onDragOver=${onDragOver} onDragEnter=${onDragOver} onDragLeave=${() => setDragging(false)} onDrop=${onDrop}>
      <p>Drop files here to upload them, or choose one:</p>
      <form onSubmit=${submit}>
        <label for="media-file">File</label> <input id="media-file" name="file" type="file" accept=${accept} disabled=${busy} />
        <button type="submit" class="primary" disabled=${busy}>Upload</button>
      </form>
    </div>
    <p role="status" class="status">${status}</p>
    ${failure ? html`<p>Could not upload <strong>${failure.name}</strong>:</p><${ErrorNotice} error=${failure.error} />` : null}
  </section>`;
}

function Preview({ item }: { item: MediaItem }) {
  const type = item.mimeType.split('/')[0];
  if (type === 'image') return html`<img class="preview" src=${item.downloadUrl} alt=${`Preview of ${item.name}`} loading="lazy" />`;
  if (type === 'audio') return html`<audio class="preview" controls preload="metadata" src=${item.downloadUrl} aria-label=${`Play ${item.name}`}></audio>`;
  if (type === 'video') return html`<video class="preview" controls preload="metadata" src=${item.downloadUrl} aria-label=${`Play ${item.name}`}></video>`;
  return html`<span class="muted">No preview (${item.mimeType})</span>`;
}

function MediaTable({ items, workspaceId, mode }: { items: MediaItem[] | undefined; workspaceId: string; mode: KeyMode }) {
  const [error, setError] = useState<unknown>();
  if (!items) return html`<p aria-live="polite">Loading media…</p>`;
  if (items.length === 0) return html`<p>No media yet.</p>`;

  async function download(item: MediaItem) {
    setError(undefined);
    try {
      // A fresh signed URL: the one the list carries may have expired while the page was open.
      const { url } = await mediaApi.download(workspaceId, item.id, mode);
      const a = document.createElement('a');
      a.href = url;
      a.download = item.name;
      document.body.append(a);
      a.click();
      a.remove();
    } catch (err) {
      setError(err);
    }
  }

  return html`<${ErrorNotice} error=${error} />
    <table class="media">
      <caption>Media, newest first</caption>
      <thead><tr><th scope="col">Name</th><th scope="col">Preview</th><th scope="col">Type</th><th scope="col">Size</th><th scope="col">Uploaded</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
      <tbody>
        ${items.map(
          (m) => html`<tr key=${m.id} data-media-id=${m.id}>
            <th scope="row">${m.name}</th>
            <td><${Preview} item=${m} /></td>
            <td>${m.mimeType}</td>
            <td>${formatBytes(m.sizeBytes)}</td>
            <td>${formatTime(m.createdAt)}</td>
            <td><button type="button" aria-label=${`Download ${m.name}`} onClick=${() => download(m)}>Download</button></td>
          </tr>`,
        )}
      </tbody>
    </table>`;
}
