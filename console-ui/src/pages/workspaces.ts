/** The workspaces the user owns, administers or belongs to, with the role that decides what they may do. */
import type { Me } from '../api.js';
import { PageHeading } from '../components.js';
import { html } from '../html.js';

export function WorkspacesPage({ me }: { me: Me }) {
  return html`<${PageHeading}>Workspaces<//>
    ${me.workspaces.length === 0
      ? html`<p>You have no workspace yet; the operator creates them.</p>`
      : html`<table>
          <caption>Your workspaces</caption>
          <thead><tr><th scope="col">Name</th><th scope="col">Plan</th><th scope="col">Organization</th><th scope="col">Your role</th><th scope="col">Keys</th><th scope="col">Id</th></tr></thead>
          <tbody>
            ${me.workspaces.map(
              (w) => html`<tr key=${w.id}>
                <th scope="row">${w.name}</th>
                <td>${w.plan}</td>
                <td>${w.organizationName ?? 'personal'}</td>
                <td>${w.role}</td>
                <td>${w.canManageKeys ? 'you manage them' : 'owners and admins manage them'}</td>
                <td><code>${w.id}</code></td>
              </tr>`,
            )}
          </tbody>
        </table>`}`;
}
