/**
 * Pages of issue 35 that this console does not have yet: they say so, and name the public API
 * endpoints that do the work today. They show no data, never made-up data.
 */
import { PageHeading } from '../components.js';
import { html } from '../html.js';

const PENDING: Record<string, { title: string; endpoints: string[] }> = {
  run: { title: 'Run', endpoints: ['GET /v1/tools', 'POST /v1/estimates', 'POST /v1/runs'] },
  jobs: { title: 'Jobs', endpoints: ['GET /v1/jobs', 'GET /v1/jobs/{jobId}', 'GET /v1/jobs/{jobId}/output', 'GET /v1/jobs/{jobId}/stream', 'POST /v1/jobs/{jobId}/cancel', 'POST /v1/jobs/{jobId}/retry'] },
  usage: { title: 'Usage', endpoints: ['GET /v1/usage', 'GET /v1/balance', 'GET /v1/transactions'] },
  media: { title: 'Media', endpoints: ['POST /v1/media/upload', 'GET /v1/media', 'GET /v1/media/{mediaId}', 'GET /v1/media/{mediaId}/download'] },
  webhooks: { title: 'Webhooks', endpoints: ['GET /v1/webhooks', 'POST /v1/webhooks', 'GET /v1/webhooks/{webhookId}/deliveries', 'POST /v1/webhooks/{webhookId}/deliveries/{deliveryId}/replay'] },
};

export function NotYetPage({ page }: { page: keyof typeof PENDING }) {
  const p = PENDING[page]!;
  return html`<${PageHeading}>${p.title}<//>
    <p>This page is not in the console yet. Until it is, a key created on the Keys page does this through the public API:</p>
    <ul>${p.endpoints.map((e) => html`<li key=${e}><code>${e}</code></li>`)}</ul>
    <p>The API reference is at <a href="/docs">/docs</a>.</p>`;
}

export const NOT_YET_PAGES = Object.keys(PENDING) as (keyof typeof PENDING)[];
