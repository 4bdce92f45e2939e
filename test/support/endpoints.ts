/** Every public endpoint implemented so far, for the shared route tests. Add new ones here. */
import type { Scope } from '../../src/modules/auth/scopes.js';
import type { TestContext } from './harness.js';
import type { Tenant } from './seed.js';
import { seedWebhook, verifyHost } from './webhook-hosts.js';
import { insertEvent } from '../../src/modules/events/store.js';

export interface EndpointCase {
  method: 'GET' | 'POST';
  /** The route as registered (`:param` placeholders are fine where the request is refused before routing matters). */
  url: string;
  scope: Scope;
  code: string;
  points: number;
  body?: unknown;
  /**
   * Prepares the tenant for the cases that must succeed (a verified host, an existing resource);
   * returns the concrete URL and body to send. Without it, `url` and `body` are sent as they are.
   */
  setup?: (ctx: TestContext, t: Tenant) => Promise<{ url: string; body?: unknown }>;
}

/** The URL and body for a case that must succeed, after the case's setup. */
export async function prepareEndpoint(ctx: TestContext, ep: EndpointCase, t: Tenant): Promise<{ url: string; body?: unknown }> {
  return ep.setup ? ep.setup(ctx, t) : { url: ep.url, body: ep.body };
}

async function webhookUrl(ctx: TestContext, t: Tenant, action: string): Promise<string> {
  const { webhook } = await seedWebhook(ctx, t.workspace.id);
  return `/v1/webhooks/${webhook.id}/${action}`;
}

export const PUBLIC_ENDPOINTS: EndpointCase[] = [
  { method: 'GET', url: '/v1/workspaces', scope: 'workspaces:read', code: 'PUBLIC_WORKSPACES_LIST', points: 2 },
  { method: 'GET', url: '/v1/usage', scope: 'usage:read', code: 'PUBLIC_USAGE_GET', points: 1 },
  { method: 'GET', url: '/v1/balance', scope: 'billing:read', code: 'PUBLIC_BALANCE_GET', points: 2 },
  { method: 'GET', url: '/v1/transactions', scope: 'billing:read', code: 'PUBLIC_TRANSACTIONS_LIST', points: 2 },
  { method: 'GET', url: '/v1/media', scope: 'media:read', code: 'PUBLIC_MEDIA_LIST', points: 2 },
  { method: 'POST', url: '/v1/media/upload', scope: 'media:write', code: 'PUBLIC_MEDIA_UPLOAD', points: 10, body: onePixelPngForm() },
  { method: 'GET', url: '/v1/events', scope: 'jobs:read', code: 'PUBLIC_EVENTS_LIST', points: 2 },
  { method: 'GET', url: '/v1/webhooks', scope: 'webhooks:read', code: 'PUBLIC_WEBHOOKS_LIST', points: 2 },
  {
    method: 'POST',
    url: '/v1/webhooks',
    scope: 'webhooks:write',
    code: 'PUBLIC_WEBHOOKS_CREATE',
    points: 5,
    body: { url: 'https://hooks.unverified.example/x', eventTypes: ['job.completed'] },
    setup: async (ctx, t) => ({ url: '/v1/webhooks', body: { url: `https://${await verifyHost(ctx, t.workspace.id)}/hooks`, eventTypes: ['job.completed'] } }),
  },
  {
    method: 'POST',
    url: '/v1/webhooks/:webhookId/update',
    scope: 'webhooks:write',
    code: 'PUBLIC_WEBHOOKS_UPDATE',
    points: 5,
    body: { enabled: false },
    setup: async (ctx, t) => ({ url: await webhookUrl(ctx, t, 'update'), body: { enabled: false } }),
  },
  {
    method: 'POST',
    url: '/v1/webhooks/:webhookId/revoke',
    scope: 'webhooks:write',
    code: 'PUBLIC_WEBHOOKS_REVOKE',
    points: 2,
    setup: async (ctx, t) => ({ url: await webhookUrl(ctx, t, 'revoke') }),
  },
  {
    method: 'POST',
    url: '/v1/webhooks/:webhookId/rotate',
    scope: 'webhooks:write',
    code: 'PUBLIC_WEBHOOKS_ROTATE',
    points: 5,
    setup: async (ctx, t) => ({ url: await webhookUrl(ctx, t, 'rotate') }),
  },
  {
    method: 'GET',
    url: '/v1/webhooks/:webhookId/deliveries',
    scope: 'webhooks:read',
    code: 'PUBLIC_WEBHOOKS_DELIVERIES',
    points: 2,
    setup: async (ctx, t) => ({ url: await webhookUrl(ctx, t, 'deliveries') }),
  },
  {
    method: 'POST',
    url: '/v1/webhooks/:webhookId/deliveries/:deliveryId/replay',
    scope: 'webhooks:write',
    code: 'PUBLIC_WEBHOOKS_REPLAY',
    points: 10,
    setup: async (ctx, t) => {
      // A failed delivery: an event fanned out to the webhook, its delivery marked failed.
      const { webhook } = await seedWebhook(ctx, t.workspace.id);
      await ctx.deps.db.transaction().execute((trx) => insertEvent(trx, t.workspace.id, 'job.completed', { job: {} }, ctx.clock.now()));
      const delivery = await ctx.deps.db
        .updateTable('webhook_deliveries')
        .set({ status: 'failed', attempts: 1, last_status_code: 410, last_error_code: 'WEBHOOK_HTTP_ERROR' })
        .where('webhook_id', '=', webhook.id)
        .returning('id')
        .executeTakeFirstOrThrow();
      return { url: `/v1/webhooks/${webhook.id}/deliveries/${delivery.id}/replay` };
    },
  },
];

/** A multipart body holding a valid 1×1 PNG as the `file` part (light-my-request encodes FormData). */
function onePixelPngForm(): FormData {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'pixel.png');
  return form;
}
