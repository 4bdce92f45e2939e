/**
 * A workspace's webhooks and domains: the webhooks (never a secret), "Create webhook" on a
 * verified hostname with the secret shown once and a copy button, "Rotate secret" (the new one
 * shown once), "Revoke", and each webhook's deliveries with status and attempts, where a failed
 * one can be replayed ("Replay"). Owners and admins change; members see everything read-only,
 * without the controls (the endpoints refuse them too).
 */
import { useEffect, useState } from 'preact/hooks';
import type { KeyMode, Workspace } from '../api.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';
import { DomainsSection } from './domains.js';
import { webhooksApi, type Delivery, type Domain, type Webhook, type WebhookWithSecret } from './webhooks-api.js';

/** A workspace's webhooks (with the event types and whether the caller may change them) and domains, read again on demand. */
function useWebhooksData(workspaceId: string | undefined, mode: KeyMode, onSwitch: () => void) {
  const [webhooks, setWebhooks] = useState<Webhook[] | undefined>();
  const [eventTypes, setEventTypes] = useState<string[]>([]);
  const [domains, setDomains] = useState<Domain[] | undefined>();
  const [canManage, setCanManage] = useState(false);
  const [error, setError] = useState<unknown>();
  async function loadWebhooks(id: string) {
    try {
      const page = await webhooksApi.list(id, mode);
      setWebhooks(page.items);
      setEventTypes(page.eventTypes);
      setCanManage(page.canManage);
    } catch (err) {
      setWebhooks(undefined);
      setError(err);
    }
  }
  async function loadDomains(id: string) {
    try {
      setDomains((await webhooksApi.listDomains(id)).items);
    } catch (err) {
      setDomains(undefined);
      setError(err);
    }
  }
  useEffect(() => {
    setWebhooks(undefined);
    setDomains(undefined);
    setError(undefined);
    onSwitch();
    if (workspaceId) void Promise.all([loadWebhooks(workspaceId), loadDomains(workspaceId)]);
  }, [workspaceId, mode]);
  return { webhooks, eventTypes, domains, canManage, error, setError, loadWebhooks, loadDomains };
}

export function WebhooksPage({ workspace, mode }: { workspace: Workspace | undefined; mode: KeyMode }) {
  const [secret, setSecret] = useState<{ what: string; shown: WebhookWithSecret } | undefined>();
  const [selected, setSelected] = useState<string | undefined>();
  const { webhooks, eventTypes, domains, canManage, error, setError, loadWebhooks, loadDomains } = useWebhooksData(workspace?.id, mode, () => {
    setSecret(undefined);
    setSelected(undefined);
  });

  if (!workspace) return html`<${PageHeading}>Webhooks<//><p>You have no workspace yet.</p>`;
  const id = workspace.id;

  async function act(run: () => Promise<void>) {
    setError(undefined);
    try {
      await run();
      await loadWebhooks(id);
    } catch (err) {
      setError(err);
    }
  }
  const rotate = (w: Webhook) =>
    act(async () => {
      setSecret({ what: `New secret of ${w.url}`, shown: await webhooksApi.rotate(id, mode, w.id) });
    });
  const revoke = (w: Webhook) =>
    act(async () => {
      await webhooksApi.revoke(id, mode, w.id);
      if (secret?.shown.webhook.id === w.id) setSecret(undefined);
    });

  const verified = (domains ?? []).filter((d) => d.status === 'verified').map((d) => d.hostname);
  const selectedHook = webhooks?.find((w) => w.id === selected);
  return html`<${PageHeading}>Webhooks<//>
    <p>Webhooks of <strong>${workspace.name}</strong> send its events to HTTPS URLs on hostnames verified in this workspace, signed with the webhook's secret.</p>
    ${mode === 'test' ? html`<p class="notice test-mode"><span class="badge test">Test</span> Test mode: these are the workspace's test webhooks; they receive the events of test keys' work only (and live webhooks never do). Domains are shared by both modes.</p>` : null}
    ${canManage
      ? null
      : webhooks
        ? html`<p class="notice">Your role in <strong>${workspace.name}</strong> is <strong>${workspace.role}</strong>: you see its webhooks, deliveries and domains; only owners and admins change them. Ask one of them.</p>`
        : null}
    ${secret ? html`<${SecretOnce} what=${secret.what} shown=${secret.shown} onDone=${() => setSecret(undefined)} />` : null}
    <${ErrorNotice} error=${error} />
    <${WebhookTable} webhooks=${webhooks} canManage=${canManage} selected=${selected} onSelect=${setSelected} onRotate=${rotate} onRevoke=${revoke} />
    ${selectedHook ? html`<${Deliveries} key=${selectedHook.id} workspaceId=${id} mode=${mode} webhook=${selectedHook} canManage=${canManage} />` : null}
    ${canManage && webhooks
      ? html`<${CreateWebhookForm}
          eventTypes=${eventTypes}
          verified=${verified}
          onCreate=${async (body: { url: string; eventTypes: string[]; enabled: boolean }) => {
            const shown = await webhooksApi.create(id, mode, body);
            setSecret({ what: `Secret of the new webhook ${shown.webhook.url}`, shown });
            await loadWebhooks(id);
          }}
        />`
      : null}
    <${DomainsSection} workspaceId=${id} domains=${domains} canManage=${canManage} onChanged=${() => loadDomains(id)} />`;
}

function webhookStatus(w: Webhook): string {
  if (w.revokedAt) return `revoked ${formatTime(w.revokedAt)}`;
  return w.enabled ? 'active' : 'disabled';
}

function WebhookTable(props: { webhooks: Webhook[] | undefined; canManage: boolean; selected: string | undefined; onSelect: (id: string | undefined) => void; onRotate: (w: Webhook) => void; onRevoke: (w: Webhook) => void }) {
  const { webhooks, canManage, selected } = props;
  if (!webhooks) return html`<p aria-live="polite">Loading webhooks…</p>`;
  if (webhooks.length === 0) return html`<p>No webhooks yet.</p>`;
  return html`<table>
    <caption>Webhooks, oldest first</caption>
    <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
      ${webhooks.map(
        (w) => html`<tr key=${w.id} data-webhook-id=${w.id}>
          <th scope="row"><code>${w.url}</code></th>
          <td>${w.eventTypes.join(', ')}</td>
          <td>${webhookStatus(w)}</td>
          <td>${formatTime(w.createdAt)}</td>
          <td class="actions">
            <button type="button" aria-pressed=${selected === w.id} aria-label=${`Deliveries of ${w.url}`} onClick=${() => props.onSelect(selected === w.id ? undefined : w.id)}>Deliveries</button>
            ${canManage && !w.revokedAt
              ? html`<button type="button" aria-label=${`Rotate secret of ${w.url}`} onClick=${() => props.onRotate(w)}>Rotate secret</button>
                  <button type="button" class="danger" aria-label=${`Revoke webhook ${w.url}`} onClick=${() => props.onRevoke(w)}>Revoke</button>`
              : null}
          </td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function lastAnswer(d: Delivery): string {
  if (d.lastStatusCode !== null) return `HTTP ${d.lastStatusCode}`;
  return d.lastErrorCode ?? '—';
}

function Deliveries({ workspaceId, mode, webhook, canManage }: { workspaceId: string; mode: KeyMode; webhook: Webhook; canManage: boolean }) {
  const [items, setItems] = useState<Delivery[] | undefined>();
  const [nextCursor, setNextCursor] = useState<string | null>(null);
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState('');

  async function load() {
    setError(undefined);
    try {
      const page = await webhooksApi.deliveries(workspaceId, mode, webhook.id);
      setItems(page.items);
      setNextCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    }
  }
  async function more(cursor: string) {
    try {
      const page = await webhooksApi.deliveries(workspaceId, mode, webhook.id, cursor);
      setItems((current) => [...(current ?? []), ...page.items]);
      setNextCursor(page.nextCursor);
    } catch (err) {
      setError(err);
    }
  }
  useEffect(() => {
    void load();
  }, [webhook.id]);

  async function replay(d: Delivery) {
    setError(undefined);
    setStatus('');
    try {
      const { delivery } = await webhooksApi.replay(workspaceId, mode, webhook.id, d.id);
      setItems((current) => current?.map((x) => (x.id === delivery.id ? delivery : x)));
      setStatus(`Delivery of event ${delivery.eventId} queued again (replay ${delivery.replayCount}).`);
    } catch (err) {
      setError(err);
    }
  }

  return html`<section class="deliveries" aria-labelledby="deliveries-heading">
    <h2 id="deliveries-heading">Deliveries of <code>${webhook.url}</code></h2>
    <p><button type="button" onClick=${() => { setStatus(''); void load(); }}>Refresh deliveries</button></p>
    <p role="status" class="status">${status}</p>
    <${ErrorNotice} error=${error} />
    ${!items
      ? html`<p aria-live="polite">Loading deliveries…</p>`
      : items.length === 0
        ? html`<p>No deliveries yet.</p>`
        : html`<table>
            <caption>Deliveries, newest first</caption>
            <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Replays</th><th scope="col">Last answer</th><th scope="col">Created</th><th scope="col">Delivered</th>${canManage ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : null}</tr></thead>
            <tbody>
              ${items.map(
                (d) => html`<tr key=${d.id} data-delivery-id=${d.id}>
                  <th scope="row"><code>${d.eventId}</code></th>
                  <td class=${`delivery-status ${d.status}`}>${d.status}</td>
                  <td>${d.attempts}</td>
                  <td>${d.replayCount}</td>
                  <td>${lastAnswer(d)}</td>
                  <td>${formatTime(d.createdAt)}</td>
                  <td>${formatTime(d.deliveredAt)}</td>
                  ${canManage ? html`<td>${d.status === 'failed' && !webhook.revokedAt ? html`<button type="button" onClick=${() => replay(d)}>Replay</button>` : null}</td>` : null}
                </tr>`,
              )}
            </tbody>
          </table>`}
    ${nextCursor ? html`<p><button type="button" onClick=${() => more(nextCursor)}>Show older deliveries</button></p>` : null}
  </section>`;
}

function SecretOnce({ what, shown, onDone }: { what: string; shown: WebhookWithSecret; onDone: () => void }) {
  const [copied, setCopied] = useState('');
  async function copy() {
    try {
      await navigator.clipboard.writeText(shown.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard; select the secret and copy it by hand.');
    }
  }
  return html`<section class="notice success" aria-labelledby="webhook-secret-heading">
    <h2 id="webhook-secret-heading">${what}</h2>
    <p>Copy the signing secret now: it is shown only this once. Receivers verify each delivery's <code>Service-Signature</code> with it.</p>
    <p><label for="webhook-secret">Webhook secret</label> <input id="webhook-secret" class="secret" readonly value=${shown.secret} size="60" /></p>
    <p>
      <button type="button" onClick=${copy}>Copy secret</button>
      <button type="button" onClick=${onDone}>I have stored it</button>
      <span role="status">${copied}</span>
    </p>
  </section>`;
}

function CreateWebhookForm({ eventTypes, verified, onCreate }: { eventTypes: string[]; verified: string[]; onCreate: (body: { url: string; eventTypes: string[]; enabled: boolean }) => Promise<void> }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setBusy(true);
    setError(undefined);
    try {
      await onCreate({ url: String(data.get('url') ?? '').trim(), eventTypes: data.getAll('eventTypes').map(String), enabled: data.get('enabled') === 'on' });
      form.reset();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<form class="create-key" onSubmit=${submit} aria-labelledby="create-webhook-heading">
    <h2 id="create-webhook-heading">New webhook</h2>
    <p>${verified.length > 0 ? html`Verified hostnames: ${verified.map((h, i) => html`${i > 0 ? ', ' : ''}<code key=${h}>${h}</code>`)}.` : 'No hostname is verified yet: add and check a domain below first.'}</p>
    <p><label for="webhook-url">URL (HTTPS, on a verified hostname)</label> <input id="webhook-url" name="url" type="url" required size="50" placeholder="https://hooks.example.com/service" /></p>
    <fieldset><legend>Events</legend>
      ${eventTypes.map((t) => html`<label key=${t} class="check"><input type="checkbox" name="eventTypes" value=${t} defaultChecked=${t.startsWith('job.')} /> ${t}</label>`)}
    </fieldset>
    <p><label class="check"><input type="checkbox" name="enabled" defaultChecked=${true} /> Enabled</label></p>
    <${ErrorNotice} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>Create webhook</button>
  </form>`;
}
