/**
 * Every public endpoint implemented so far, for the shared route tests. Add new ones here. The
 * setups follow the tenant's key mode: a test key's credits are test credits and its webhooks and
 * events live in the test twin (seed.ts scopeOf); hostnames are verified in the live workspace.
 */
import { randomUUID } from 'node:crypto';
import type { Scope } from '../../src/modules/auth/scopes.js';
import type { OperationId } from '../../src/operations/ids.js';
import { grantCredits } from '../../src/modules/billing/service.js';
import type { TestContext } from './harness.js';
import { drain, run } from './jobs.js';
import { scopeOf, type Tenant } from './seed.js';
import { seedWebhook, verifyHost } from './webhook-hosts.js';
import { seedVoice } from './voices.js';
import { insertEvent } from '../../src/modules/events/store.js';

export interface EndpointCase {
  method: 'GET' | 'POST' | 'DELETE';
  /** The route as registered (`:param` placeholders are fine where the request is refused before routing matters). */
  url: string;
  scope: Scope;
  code: string;
  /** The spec's weight; for endpoints whose weight is operation-specific, that of `operationId`. */
  points: number;
  /** The operation a run or retry case runs (its weight is `points`); also names the case. */
  operationId?: OperationId;
  /** The status of a successful request: 200 unless the endpoint answers queued work with 202. */
  status?: 200 | 202;
  body?: unknown;
  /**
   * Headers every request of the case sends (refused ones included), called once per request so
   * each gets fresh values, e.g. a new Idempotency-Key.
   */
  headers?: () => Record<string, string>;
  /**
   * Prepares the tenant for the cases that must succeed (a verified host, an existing resource);
   * returns the concrete URL and body to send. Without it, `url` and `body` are sent as they are.
   */
  setup?: (ctx: TestContext, t: Tenant) => Promise<{ url: string; body?: unknown }>;
}

/** The case's name in test titles: method and route, and the operation where it has one. */
export function endpointName(ep: EndpointCase): string {
  return `${ep.method} ${ep.url}${ep.operationId ? ` (${ep.operationId})` : ''}`;
}

/** Fresh headers for one request of the case. */
export function endpointHeaders(ep: EndpointCase): Record<string, string> {
  return ep.headers ? ep.headers() : {};
}

/** The URL and body for a case that must succeed, after the case's setup. */
export async function prepareEndpoint(ctx: TestContext, ep: EndpointCase, t: Tenant): Promise<{ url: string; body?: unknown }> {
  return ep.setup ? ep.setup(ctx, t) : { url: ep.url, body: ep.body };
}

async function webhookUrl(ctx: TestContext, t: Tenant, action: string): Promise<string> {
  const { webhook } = await seedWebhook(ctx, scopeOf(t));
  return `/v1/webhooks/${webhook.id}/${action}`;
}

const freshIdempotencyKey = () => ({ 'idempotency-key': randomUUID() });
/** The key GET /v1/runs/lookup asks for: set by that case's setup. */
let lookupKey = randomUUID();

/** Input of the synchronous chat.generate run. */
const CHAT_INPUT = { messages: [{ role: 'user', content: 'Hello there' }], maxTokens: 100 };
/** Input of a queued music.generate run; `directives` steer the simulated provider. */
const MUSIC_INPUT = (directives = '') => ({ prompt: `a calm tune ${directives}`.trim(), durationSeconds: 5 });

/** Credits enough for a few runs, whatever the tenant was seeded with (test credits for a test key). */
async function fund(ctx: TestContext, t: Tenant): Promise<void> {
  await grantCredits(ctx.deps, t.workspace.id, { amountMillicents: 100_000, mode: t.key.mode });
}

/**
 * A music.generate job in the tenant's workspace, queued through POST /v1/runs (which costs the
 * workspace the operation's points) and, with `finish`, run to its end by the worker.
 */
async function seedJob(ctx: TestContext, t: Tenant, options: { directives?: string; finish?: 'completed' | 'failed' } = {}): Promise<string> {
  await fund(ctx, t);
  const res = await run(ctx, t, 'music.generate', MUSIC_INPUT(options.directives));
  if (res.statusCode !== 202) throw new Error(`seeding a job: POST /v1/runs ${res.statusCode} ${res.body}`);
  const jobId: string = res.json().data.jobId;
  if (options.finish) {
    await drain(ctx);
    const row = await ctx.deps.db.selectFrom('jobs').select('status').where('id', '=', jobId).executeTakeFirstOrThrow();
    if (row.status !== options.finish) throw new Error(`seeding a job: status ${row.status}, wanted ${options.finish}`);
  }
  return jobId;
}

export const PUBLIC_ENDPOINTS: EndpointCase[] = [
  { method: 'GET', url: '/v1/workspaces', scope: 'workspaces:read', code: 'PUBLIC_WORKSPACES_LIST', points: 2 },
  { method: 'GET', url: '/v1/tools', scope: 'tools:read', code: 'PUBLIC_TOOLS_LIST', points: 2 },
  {
    method: 'POST',
    url: '/v1/estimates',
    scope: 'tools:run',
    code: 'PUBLIC_TOOLS_ESTIMATE',
    points: 4,
    body: { operationId: 'chat.generate', input: CHAT_INPUT },
  },
  {
    method: 'POST',
    url: '/v1/runs',
    scope: 'tools:run',
    code: 'PUBLIC_TOOLS_RUN',
    points: 10,
    operationId: 'chat.generate',
    headers: freshIdempotencyKey,
    body: { operationId: 'chat.generate', input: CHAT_INPUT },
    setup: async (ctx, t) => {
      await fund(ctx, t);
      return { url: '/v1/runs', body: { operationId: 'chat.generate', input: CHAT_INPUT } };
    },
  },
  {
    method: 'POST',
    url: '/v1/runs',
    scope: 'tools:run',
    code: 'PUBLIC_TOOLS_RUN',
    points: 50,
    operationId: 'music.generate',
    status: 202,
    headers: freshIdempotencyKey,
    body: { operationId: 'music.generate', input: MUSIC_INPUT() },
    setup: async (ctx, t) => {
      await fund(ctx, t);
      return { url: '/v1/runs', body: { operationId: 'music.generate', input: MUSIC_INPUT() } };
    },
  },
  {
    // The Idempotency-Key of the last run the setup made (refused requests send any key).
    method: 'GET',
    url: '/v1/runs/lookup',
    scope: 'jobs:read',
    code: 'PUBLIC_RUNS_LOOKUP',
    points: 1,
    headers: () => ({ 'idempotency-key': lookupKey }),
    setup: async (ctx, t) => {
      await fund(ctx, t);
      lookupKey = randomUUID();
      const res = await run(ctx, t, 'chat.generate', CHAT_INPUT, lookupKey);
      if (res.statusCode !== 200) throw new Error(`seeding a lookup: POST /v1/runs ${res.statusCode} ${res.body}`);
      return { url: '/v1/runs/lookup' };
    },
  },
  { method: 'GET', url: '/v1/jobs', scope: 'jobs:read', code: 'PUBLIC_JOBS_LIST', points: 2 },
  {
    method: 'GET',
    url: '/v1/jobs/:jobId',
    scope: 'jobs:read',
    code: 'PUBLIC_JOBS_GET',
    points: 1,
    setup: async (ctx, t) => ({ url: `/v1/jobs/${await seedJob(ctx, t)}` }),
  },
  {
    method: 'GET',
    url: '/v1/jobs/:jobId/output',
    scope: 'jobs:read',
    code: 'PUBLIC_JOBS_OUTPUT',
    points: 2,
    setup: async (ctx, t) => ({ url: `/v1/jobs/${await seedJob(ctx, t, { finish: 'completed' })}/output` }),
  },
  {
    method: 'POST',
    url: '/v1/jobs/:jobId/cancel',
    scope: 'jobs:write',
    code: 'PUBLIC_JOBS_CANCEL',
    points: 2,
    setup: async (ctx, t) => ({ url: `/v1/jobs/${await seedJob(ctx, t)}/cancel` }),
  },
  {
    method: 'POST',
    url: '/v1/jobs/:jobId/retry',
    scope: 'jobs:write',
    code: 'PUBLIC_JOBS_RETRY',
    points: 50,
    operationId: 'music.generate',
    status: 202,
    headers: freshIdempotencyKey,
    setup: async (ctx, t) => ({ url: `/v1/jobs/${await seedJob(ctx, t, { directives: '[sim:fail=MODEL_REFUSED]', finish: 'failed' })}/retry` }),
  },
  { method: 'GET', url: '/v1/queue', scope: 'jobs:read', code: 'PUBLIC_QUEUE_GET', points: 1 },
  { method: 'GET', url: '/v1/usage', scope: 'usage:read', code: 'PUBLIC_USAGE_GET', points: 1 },
  { method: 'GET', url: '/v1/balance', scope: 'billing:read', code: 'PUBLIC_BALANCE_GET', points: 2 },
  { method: 'GET', url: '/v1/transactions', scope: 'billing:read', code: 'PUBLIC_TRANSACTIONS_LIST', points: 2 },
  // Cost and usage analytics (issue 36): not in the shared spec; weights as the other billing and usage reads.
  { method: 'GET', url: '/v1/costs', scope: 'billing:read', code: 'PUBLIC_COSTS_GET', points: 2 },
  { method: 'GET', url: '/v1/usage/history', scope: 'usage:read', code: 'PUBLIC_USAGE_HISTORY_GET', points: 1 },
  { method: 'GET', url: '/v1/media', scope: 'media:read', code: 'PUBLIC_MEDIA_LIST', points: 2 },
  { method: 'POST', url: '/v1/media/upload', scope: 'media:write', code: 'PUBLIC_MEDIA_UPLOAD', points: 10, body: onePixelPngForm() },
  {
    method: 'GET',
    url: '/v1/media/:mediaId',
    scope: 'media:read',
    code: 'PUBLIC_MEDIA_GET',
    points: 1,
    setup: async (ctx, t) => ({ url: `/v1/media/${await seedMedia(ctx, t)}` }),
  },
  {
    method: 'GET',
    url: '/v1/media/:mediaId/download',
    scope: 'media:read',
    code: 'PUBLIC_MEDIA_DOWNLOAD',
    points: 2,
    setup: async (ctx, t) => ({ url: `/v1/media/${await seedMedia(ctx, t)}/download` }),
  },
  // Voices (issue 37): not in the shared spec; scopes and weights as the media reads (and the webhook revoke).
  { method: 'GET', url: '/v1/voices', scope: 'media:read', code: 'PUBLIC_VOICES_LIST', points: 2 },
  {
    method: 'GET',
    url: '/v1/voices/:voiceId',
    scope: 'media:read',
    code: 'PUBLIC_VOICES_GET',
    points: 1,
    setup: async (ctx, t) => ({ url: `/v1/voices/${await fundedVoice(ctx, t)}` }),
  },
  {
    method: 'DELETE',
    url: '/v1/voices/:voiceId',
    scope: 'media:write',
    code: 'PUBLIC_VOICES_DELETE',
    points: 2,
    setup: async (ctx, t) => ({ url: `/v1/voices/${await fundedVoice(ctx, t)}` }),
  },
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
      const { webhook } = await seedWebhook(ctx, scopeOf(t));
      await ctx.deps.db.transaction().execute((trx) => insertEvent(trx, scopeOf(t), 'job.completed', { job: {} }, ctx.clock.now()));
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

/** A voice of the tenant's workspace, cloned through POST /v1/runs (voice.clone) with credits granted for it. */
async function fundedVoice(ctx: TestContext, t: Tenant): Promise<string> {
  await fund(ctx, t);
  return (await seedVoice(ctx, t)).voiceId;
}

/** A media item of the tenant's workspace, uploaded through POST /v1/media/upload. */
async function seedMedia(ctx: TestContext, t: Tenant): Promise<string> {
  const res = await ctx.app.inject({ method: 'POST', url: '/v1/media/upload', headers: { authorization: `Bearer ${t.secret}`, 'x-service-workspace': t.workspace.id }, payload: onePixelPngForm() });
  if (res.statusCode !== 200) throw new Error(`seeding media: POST /v1/media/upload ${res.statusCode} ${res.body}`);
  return res.json().data.id as string;
}

/** A multipart body holding a valid 1×1 PNG as the `file` part (light-my-request encodes FormData). */
function onePixelPngForm(): FormData {
  const png = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
  const form = new FormData();
  form.append('file', new Blob([png], { type: 'image/png' }), 'pixel.png');
  return form;
}
