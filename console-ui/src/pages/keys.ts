/**
 * A workspace's API keys: the list (metadata only), "Create key" with everything a creator may
 * choose, the secret shown once with a copy button, and "Revoke". Owners and admins only; a member
 * sees why the controls are absent.
 */
import { useEffect, useState } from 'preact/hooks';
import { api, type ApiKey, type CreateKeyBody, type Me, type Workspace } from '../api.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';

export function KeysPage({ me, workspace }: { me: Me; workspace: Workspace | undefined }) {
  const [keys, setKeys] = useState<ApiKey[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<{ key: ApiKey; secret: string } | undefined>();

  async function load(id: string) {
    setError(undefined);
    try {
      setKeys((await api.listKeys(id)).items);
    } catch (err) {
      setKeys(undefined);
      setError(err);
    }
  }
  useEffect(() => {
    setCreated(undefined);
    setKeys(undefined);
    if (workspace?.canManageKeys) void load(workspace.id);
  }, [workspace?.id]);

  if (!workspace) return html`<${PageHeading}>Keys<//><p>You have no workspace yet.</p>`;
  if (!workspace.canManageKeys) {
    return html`<${PageHeading}>Keys<//>
      <p>Your role in <strong>${workspace.name}</strong> is <strong>${workspace.role}</strong>: only owners and admins of a workspace create and revoke its keys. Ask one of them.</p>`;
  }

  async function revoke(key: ApiKey) {
    setError(undefined);
    try {
      await api.revokeKey(workspace!.id, key.id);
      if (created?.key.id === key.id) setCreated(undefined);
      await load(workspace!.id);
    } catch (err) {
      setError(err);
    }
  }

  return html`<${PageHeading}>Keys<//>
    <p>API keys of <strong>${workspace.name}</strong>. A key's secret is shown once, when it is created.</p>
    ${created ? html`<${SecretOnce} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNotice} error=${error} />
    <${KeyTable} keys=${keys} onRevoke=${revoke} />
    <${CreateKeyForm}
      me=${me}
      onCreate=${async (body: CreateKeyBody) => {
        const result = await api.createKey(workspace.id, body);
        setCreated(result);
        await load(workspace.id);
      }}
    />`;
}

function KeyTable({ keys, onRevoke }: { keys: ApiKey[] | undefined; onRevoke: (k: ApiKey) => void }) {
  if (!keys) return html`<p aria-live="polite">Loading keys…</p>`;
  if (keys.length === 0) return html`<p>No keys yet.</p>`;
  return html`<table>
    <caption>Keys, newest first</caption>
    <thead><tr><th scope="col">Prefix</th><th scope="col">Scopes</th><th scope="col">Operations</th><th scope="col">Transports</th><th scope="col">Expires</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
      ${keys.map(
        (k) => html`<tr key=${k.id} data-key-id=${k.id}>
          <th scope="row"><code>${k.prefix}…</code></th>
          <td>${k.scopes.join(', ')}</td>
          <td>${k.operations.length ? k.operations.join(', ') : 'none'}</td>
          <td>${k.transports.join(', ')}</td>
          <td>${formatTime(k.expiresAt)}</td>
          <td>${formatTime(k.createdAt)}</td>
          <td>${k.revokedAt ? `revoked ${formatTime(k.revokedAt)}` : 'active'}</td>
          <td>${k.revokedAt ? null : html`<button type="button" class="danger" aria-label=${`Revoke key ${k.prefix}`} onClick=${() => onRevoke(k)}>Revoke</button>`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

function SecretOnce({ created, onDone }: { created: { key: ApiKey; secret: string }; onDone: () => void }) {
  const [copied, setCopied] = useState<string>('');
  async function copy() {
    try {
      await navigator.clipboard.writeText(created.secret);
      setCopied('Copied to the clipboard.');
    } catch {
      setCopied('The browser refused the clipboard; select the secret and copy it by hand.');
    }
  }
  return html`<section class="notice success" aria-labelledby="secret-heading">
    <h2 id="secret-heading">New key ${created.key.prefix}…</h2>
    <p>Copy the secret now: it is shown only this once.</p>
    <p><label for="new-secret">Secret</label> <input id="new-secret" class="secret" readonly value=${created.secret} size="60" /></p>
    <p>
      <button type="button" onClick=${copy}>Copy secret</button>
      <button type="button" onClick=${onDone}>I have stored it</button>
      <span role="status">${copied}</span>
    </p>
  </section>`;
}

function CreateKeyForm({ me, onCreate }: { me: Me; onCreate: (body: CreateKeyBody) => Promise<void> }) {
  const options = me.keyOptions;
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    const millicents = (name: string) => {
      const v = String(data.get(name) ?? '').trim();
      return v === '' ? undefined : Number(v);
    };
    const expires = String(data.get('expiresAt') ?? '');
    const budgets = { dailyMillicents: millicents('daily'), weeklyMillicents: millicents('weekly'), monthlyMillicents: millicents('monthly') };
    const body: CreateKeyBody = {
      scopes: data.getAll('scopes').map(String),
      operations: data.getAll('operations').map(String),
      transports: data.getAll('transports').map(String),
      ipRanges: String(data.get('ipRanges') ?? '').split(/[\s,]+/).filter(Boolean),
      ...(expires ? { expiresAt: new Date(expires).toISOString() } : {}),
      budgets: Object.fromEntries(Object.entries(budgets).filter(([, v]) => v !== undefined)),
    };
    setBusy(true);
    setError(undefined);
    try {
      await onCreate(body);
      form.reset();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const checkboxes = (name: string, values: string[], checked: (v: string) => boolean) =>
    values.map(
      (v) => html`<label key=${v} class="check"><input type="checkbox" name=${name} value=${v} defaultChecked=${checked(v)} /> ${v}</label>`,
    );

  return html`<form class="create-key" onSubmit=${submit} aria-labelledby="create-heading">
    <h2 id="create-heading">New key</h2>
    <fieldset><legend>Scopes</legend>${checkboxes('scopes', options.scopes, (s) => s.endsWith(':read'))}</fieldset>
    <fieldset><legend>Operations</legend>${checkboxes('operations', options.operations, () => false)}</fieldset>
    <fieldset><legend>Transports</legend>${checkboxes('transports', options.transports, (t) => t === 'rest')}</fieldset>
    <p><label for="key-expires">Expires (optional)</label> <input id="key-expires" name="expiresAt" type="datetime-local" /></p>
    <p><label for="key-ip-ranges">IP ranges (optional, CIDR, comma or space separated)</label> <input id="key-ip-ranges" name="ipRanges" type="text" size="40" /></p>
    <fieldset><legend>Budgets in millicents (optional)</legend>
      <label for="budget-daily">Daily</label> <input id="budget-daily" name="daily" type="number" min="1" step="1" />
      <label for="budget-weekly">Weekly</label> <input id="budget-weekly" name="weekly" type="number" min="1" step="1" />
      <label for="budget-monthly">Monthly</label> <input id="budget-monthly" name="monthly" type="number" min="1" step="1" />
    </fieldset>
    <${ErrorNotice} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>Create key</button>
  </form>`;
}
