/**
 * A workspace's domains, shown on the Webhooks page: a webhook's hostname must be verified in the
 * workspace (exactly: a verified parent domain does not cover it). Owners and admins add a
 * hostname, read where its verification token goes (a DNS TXT record or an HTTPS file) and check
 * it; members see the list only.
 */
import { useState } from 'preact/hooks';
import { ErrorNotice, formatTime } from '../components.js';
import { html } from '../html.js';
import { webhooksApi, type Domain } from './webhooks-api.js';

export function DomainsSection({ workspaceId, domains, canManage, onChanged }: { workspaceId: string; domains: Domain[] | undefined; canManage: boolean; onChanged: () => Promise<void> }) {
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState('');
  const [busy, setBusy] = useState(false);

  async function add(event: Event) {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const hostname = String(new FormData(form).get('hostname') ?? '');
    setBusy(true);
    setError(undefined);
    setStatus('');
    try {
      const { domain } = await webhooksApi.addDomain(workspaceId, hostname);
      setStatus(`Added ${domain.hostname}: publish its verification token as shown, then check it.`);
      form.reset();
      await onChanged();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  async function check(domain: Domain, method: 'dns' | 'http') {
    setBusy(true);
    setError(undefined);
    setStatus(`Checking ${domain.hostname}…`);
    try {
      const { domain: checked } = await webhooksApi.checkDomain(workspaceId, domain.hostname, method);
      setStatus(`${checked.hostname} is verified.`);
      await onChanged();
    } catch (err) {
      setStatus('');
      setError(err);
    } finally {
      setBusy(false);
    }
  }

  const pending = (domains ?? []).filter((d) => d.status !== 'verified');
  return html`<section aria-labelledby="domains-heading">
    <h2 id="domains-heading">Domains</h2>
    <p>A webhook's URL must be on a hostname verified in this workspace, exactly (a verified parent domain does not cover its subdomains).</p>
    <${DomainsTable} domains=${domains} canManage=${canManage} busy=${busy} onCheck=${check} />
    ${pending.length > 0 ? html`<${HowToVerify} pending=${pending} />` : null}
    <p role="status" class="status">${status}</p>
    <${ErrorNotice} error=${error} />
    ${canManage
      ? html`<form class="inline-form" onSubmit=${add}>
          <label for="domain-hostname">Hostname</label> <input id="domain-hostname" name="hostname" type="text" required size="40" placeholder="hooks.example.com" />
          <button type="submit" disabled=${busy}>Add domain</button>
        </form>`
      : null}
  </section>`;
}

function DomainsTable({ domains, canManage, busy, onCheck }: { domains: Domain[] | undefined; canManage: boolean; busy: boolean; onCheck: (d: Domain, method: 'dns' | 'http') => void }) {
  if (!domains) return html`<p aria-live="polite">Loading domains…</p>`;
  if (domains.length === 0) return html`<p>No domains yet.</p>`;
  return html`<table>
    <caption>Domains</caption>
    <thead><tr><th scope="col">Hostname</th><th scope="col">Status</th><th scope="col">Verified</th><th scope="col">Added</th>${canManage ? html`<th scope="col"><span class="visually-hidden">Actions</span></th>` : null}</tr></thead>
    <tbody>
      ${domains.map(
        (d) => html`<tr key=${d.hostname} data-hostname=${d.hostname}>
          <th scope="row">${d.hostname}</th>
          <td>${d.status}</td>
          <td>${d.verifiedAt ? `${formatTime(d.verifiedAt)} (${d.verifiedMethod})` : '—'}</td>
          <td>${formatTime(d.createdAt)}</td>
          ${canManage
            ? html`<td>${d.status === 'verified'
                ? null
                : html`<button type="button" disabled=${busy} aria-label=${`Check ${d.hostname} by its DNS record`} onClick=${() => onCheck(d, 'dns')}>Check DNS</button>
                    <button type="button" disabled=${busy} aria-label=${`Check ${d.hostname} by its HTTPS file`} onClick=${() => onCheck(d, 'http')}>Check file</button>`}</td>`
            : null}
        </tr>`,
      )}
    </tbody>
  </table>`;
}

/** Where each hostname not verified yet publishes its token. */
function HowToVerify({ pending }: { pending: Domain[] }) {
  return html`<div class="instructions">
    <h3>How to verify</h3>
    ${pending.map(
      (d) => html`<div key=${d.hostname} class="instruction" data-instructions-for=${d.hostname}>
        <p><strong>${d.hostname}</strong>: publish the token <code class="token">${d.verificationToken}</code> in either place, then check it:</p>
        <ul>
          <li>a DNS TXT record named <code>${d.dnsRecordName}</code> holding the token;</li>
          <li>or a file at <code>${d.httpFileUrl}</code> holding only the token (served over HTTPS, no redirect).</li>
        </ul>
      </div>`,
    )}
  </div>`;
}
