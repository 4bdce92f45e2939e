/**
 * A workspace's API keys: the list (metadata only, with each key's mode: a "Test" badge), "Create
 * key" with everything a creator may choose (a live or a test key), the secret shown once with a
 * copy button, "Edit" (scopes, operations, transports,
 * expiry, IP ranges, budgets), "Roll" (a new secret, shown once; the old one keeps working for the
 * overlap chosen) and "Revoke". Owners and admins only; a member sees why the controls are absent.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { api, request, type ApiKey, type Ceilings, type CreateKeyBody, type KeyMode, type Me, type Workspace } from '../api.js';
import { ErrorNotice, formatTime, PageHeading } from '../components.js';
import { html } from '../html.js';

const keyUrl = (workspaceId: string, keyId: string) => `/workspaces/${encodeURIComponent(workspaceId)}/keys/${encodeURIComponent(keyId)}`;

/** The console's key change and roll (the admin API's bodies and services). */
const keyChanges = {
  update: (workspaceId: string, keyId: string, body: Partial<Omit<CreateKeyBody, 'budgets'>> & { budgets?: { [K in keyof Ceilings]?: number | null } }) =>
    request<{ key: ApiKey }>('POST', `${keyUrl(workspaceId, keyId)}/update`, body),
  roll: (workspaceId: string, keyId: string, overlapSeconds: number) => request<{ key: ApiKey; secret: string }>('POST', `${keyUrl(workspaceId, keyId)}/roll`, { overlapSeconds }),
};

/** The longest overlap a roll gives the replaced secret (30 days, as the service allows). */
const MAX_OVERLAP_SECONDS = 30 * 24 * 3600;

export function KeysPage({ me, workspace }: { me: Me; workspace: Workspace | undefined }) {
  const [keys, setKeys] = useState<ApiKey[] | undefined>();
  const [error, setError] = useState<unknown>();
  const [created, setCreated] = useState<{ key: ApiKey; secret: string; rolled?: boolean } | undefined>();
  const [changing, setChanging] = useState<{ mode: 'edit' | 'roll'; key: ApiKey } | undefined>();

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
    setChanging(undefined);
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
      if (changing?.key.id === key.id) setChanging(undefined);
      await load(workspace!.id);
    } catch (err) {
      setError(err);
    }
  }

  return html`<${PageHeading}>Keys<//>
    <p>API keys of <strong>${workspace.name}</strong>. A key's secret is shown once, when it is created or rolled.</p>
    ${created ? html`<${SecretOnce} created=${created} onDone=${() => setCreated(undefined)} />` : null}
    <${ErrorNotice} error=${error} />
    <${KeyTable} keys=${keys} onRevoke=${revoke} onChange=${(mode: 'edit' | 'roll', key: ApiKey) => {
      setCreated(undefined);
      setChanging({ mode, key });
    }} />
    ${changing?.mode === 'roll'
      ? html`<${RollKeyForm} key=${`roll-${changing.key.id}`} apiKey=${changing.key} onCancel=${() => setChanging(undefined)} onRoll=${async (overlapSeconds: number) => {
          const result = await keyChanges.roll(workspace.id, changing.key.id, overlapSeconds);
          setChanging(undefined);
          setCreated({ ...result, rolled: true });
          await load(workspace.id);
        }} />`
      : null}
    ${changing?.mode === 'edit'
      ? html`<${EditKeyForm} key=${`edit-${changing.key.id}`} me=${me} apiKey=${changing.key} onCancel=${() => setChanging(undefined)} onSave=${async (body: Parameters<typeof keyChanges.update>[2]) => {
          await keyChanges.update(workspace.id, changing.key.id, body);
          setChanging(undefined);
          await load(workspace.id);
        }} />`
      : null}
    <${CreateKeyForm}
      me=${me}
      onCreate=${async (body: CreateKeyBody) => {
        const result = await api.createKey(workspace.id, body);
        setCreated(result);
        await load(workspace.id);
      }}
    />`;
}

function KeyTable({ keys, onRevoke, onChange }: { keys: ApiKey[] | undefined; onRevoke: (k: ApiKey) => void; onChange: (mode: 'edit' | 'roll', k: ApiKey) => void }) {
  if (!keys) return html`<p aria-live="polite">Loading keys…</p>`;
  if (keys.length === 0) return html`<p>No keys yet.</p>`;
  return html`<table>
    <caption>Keys, newest first</caption>
    <thead><tr><th scope="col">Prefix</th><th scope="col">Mode</th><th scope="col">Scopes</th><th scope="col">Operations</th><th scope="col">Transports</th><th scope="col">Expires</th><th scope="col">Created</th><th scope="col">Status</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
      ${keys.map(
        (k) => html`<tr key=${k.id} data-key-id=${k.id}>
          <th scope="row"><code>${k.prefix}…</code></th>
          <td><${ModeBadge} mode=${k.mode} /></td>
          <td>${k.scopes.join(', ')}</td>
          <td>${k.operations.length ? k.operations.join(', ') : 'none'}</td>
          <td>${k.transports.join(', ')}</td>
          <td>${formatTime(k.expiresAt)}</td>
          <td>${formatTime(k.createdAt)}</td>
          <td>${k.revokedAt ? `revoked ${formatTime(k.revokedAt)}` : 'active'}</td>
          <td class="actions">${k.revokedAt
            ? null
            : html`<button type="button" aria-label=${`Edit key ${k.prefix}`} onClick=${() => onChange('edit', k)}>Edit</button>
                <button type="button" aria-label=${`Roll key ${k.prefix}`} onClick=${() => onChange('roll', k)}>Roll</button>
                <button type="button" class="danger" aria-label=${`Revoke key ${k.prefix}`} onClick=${() => onRevoke(k)}>Revoke</button>`}</td>
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/** A key's mode in the list: a "Test" badge for test keys (the text, not only the colour, says it). */
function ModeBadge({ mode }: { mode: KeyMode }) {
  return mode === 'test' ? html`<span class="badge test">Test</span>` : html`<span class="badge live">Live</span>`;
}

function SecretOnce({ created, onDone }: { created: { key: ApiKey; secret: string; rolled?: boolean }; onDone: () => void }) {
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
    <h2 id="secret-heading">${created.rolled ? `New secret of ${created.key.mode === 'test' ? 'test key' : 'key'} ${created.key.prefix}…` : `New ${created.key.mode === 'test' ? 'test key' : 'key'} ${created.key.prefix}…`}</h2>
    <p>Copy the secret now: it is shown only this once.${created.key.mode === 'test' ? ' It is a test key: everything it runs is simulated and paid from the test balance (see Usage).' : ''}</p>
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
      mode: data.get('mode') === 'test' ? 'test' : 'live',
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
    <fieldset><legend>Mode</legend>
      <label class="check"><input type="radio" name="mode" value="live" defaultChecked /> Live: real work, paid from the workspace’s credits</label>
      <label class="check"><input type="radio" name="mode" value="test" /> Test: every operation simulated for free, paid from the test balance (secret <code>wask_test_…</code>)</label>
    </fieldset>
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

/** A heading that takes the keyboard focus when its form opens (the form appears below the list). */
function useFocusOnOpen() {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

/** An ISO time as a datetime-local value in the browser's time zone. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "Edit": every choice of the key, as it is now; an emptied expiry or budget removes it. */
function EditKeyForm({ me, apiKey, onSave, onCancel }: { me: Me; apiKey: ApiKey; onSave: (body: Parameters<typeof keyChanges.update>[2]) => Promise<void>; onCancel: () => void }) {
  const options = me.keyOptions;
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const id = (name: string) => `edit-${apiKey.id}-${name}`;
  const heading = useFocusOnOpen();

  async function submit(event: Event) {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    const millicents = (name: string) => {
      const v = String(data.get(name) ?? '').trim();
      return v === '' ? null : Number(v);
    };
    const expires = String(data.get('expiresAt') ?? '');
    setBusy(true);
    setError(undefined);
    try {
      await onSave({
        scopes: data.getAll('scopes').map(String),
        operations: data.getAll('operations').map(String),
        transports: data.getAll('transports').map(String),
        ipRanges: String(data.get('ipRanges') ?? '').split(/[\s,]+/).filter(Boolean),
        expiresAt: expires ? new Date(expires).toISOString() : null,
        budgets: { dailyMillicents: millicents('daily'), weeklyMillicents: millicents('weekly'), monthlyMillicents: millicents('monthly') },
      });
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const checkboxes = (name: string, values: string[], chosen: string[]) =>
    values.map((v) => html`<label key=${v} class="check"><input type="checkbox" name=${name} value=${v} defaultChecked=${chosen.includes(v)} /> ${v}</label>`);
  const budget = (v: number | null) => (v === null ? '' : String(v));

  return html`<form class="create-key edit-key" onSubmit=${submit} aria-labelledby=${id('heading')}>
    <h2 id=${id('heading')} tabindex="-1" ref=${heading}>Edit key ${apiKey.prefix}…</h2>
    <p>Changes apply at once to every request made with this key.</p>
    <fieldset><legend>Scopes</legend>${checkboxes('scopes', options.scopes, apiKey.scopes)}</fieldset>
    <fieldset><legend>Operations</legend>${checkboxes('operations', options.operations, apiKey.operations)}</fieldset>
    <fieldset><legend>Transports</legend>${checkboxes('transports', options.transports, apiKey.transports)}</fieldset>
    <p><label for=${id('expires')}>Expires (empty: never)</label> <input id=${id('expires')} name="expiresAt" type="datetime-local" defaultValue=${localInput(apiKey.expiresAt)} /></p>
    <p><label for=${id('ip')}>IP ranges (CIDR, comma or space separated; empty: any address)</label> <input id=${id('ip')} name="ipRanges" type="text" size="40" defaultValue=${apiKey.ipRanges.join(', ')} /></p>
    <fieldset><legend>Budgets in millicents (empty: none)</legend>
      <label for=${id('daily')}>Daily</label> <input id=${id('daily')} name="daily" type="number" min="1" step="1" defaultValue=${budget(apiKey.budgets.dailyMillicents)} />
      <label for=${id('weekly')}>Weekly</label> <input id=${id('weekly')} name="weekly" type="number" min="1" step="1" defaultValue=${budget(apiKey.budgets.weeklyMillicents)} />
      <label for=${id('monthly')}>Monthly</label> <input id=${id('monthly')} name="monthly" type="number" min="1" step="1" defaultValue=${budget(apiKey.budgets.monthlyMillicents)} />
    </fieldset>
    <${ErrorNotice} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>Save changes</button>
    <button type="button" onClick=${onCancel}>Cancel editing</button>
  </form>`;
}

/** "Roll": a new secret, shown once; the old secret keeps working for the overlap chosen, then is refused. */
function RollKeyForm({ apiKey, onRoll, onCancel }: { apiKey: ApiKey; onRoll: (overlapSeconds: number) => Promise<void>; onCancel: () => void }) {
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const id = `roll-${apiKey.id}-overlap`;
  const heading = useFocusOnOpen();

  async function submit(event: Event) {
    event.preventDefault();
    const data = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(undefined);
    try {
      await onRoll(Math.round(Number(String(data.get('overlapMinutes') ?? '0')) * 60));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  return html`<form class="create-key roll-key" onSubmit=${submit} aria-labelledby=${`${id}-heading`}>
    <h2 id=${`${id}-heading`} tabindex="-1" ref=${heading}>Roll key ${apiKey.prefix}…</h2>
    <p>Rolling gives the key a new secret, shown once. The current secret keeps working for the overlap below (time to deploy the new one), then the API refuses it.</p>
    <p><label for=${id}>Overlap in minutes (0 to ${MAX_OVERLAP_SECONDS / 60})</label> <input id=${id} name="overlapMinutes" type="number" min="0" max=${MAX_OVERLAP_SECONDS / 60} step="1" defaultValue="60" required /></p>
    <${ErrorNotice} error=${error} />
    <button type="submit" class="primary" disabled=${busy}>Roll key</button>
    <button type="button" onClick=${onCancel}>Cancel roll</button>
  </form>`;
}
