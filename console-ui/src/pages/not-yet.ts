/**
 * Pages of issue 35 that this console does not have yet: they say so, and name the public API
 * endpoints that do the work today. They show no data, never made-up data.
 */
import { PageHeading } from '../components.js';
import { html } from '../html.js';

const PENDING: Record<string, { title: string; endpoints: string[] }> = {};

export function NotYetPage({ page }: { page: keyof typeof PENDING }) {
  const p = PENDING[page]!;
  return html`<${PageHeading}>${p.title}<//>
    <p>This page is not in the console yet. Until it is, a key created on the Keys page does this through the public API:</p>
    <ul>${p.endpoints.map((e) => html`<li key=${e}><code>${e}</code></li>`)}</ul>
    <p>The API reference is at <a href="/docs">/docs</a>.</p>`;
}

export const NOT_YET_PAGES = Object.keys(PENDING) as (keyof typeof PENDING)[];
